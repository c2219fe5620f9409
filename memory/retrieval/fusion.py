"""Weighted reciprocal-rank fusion of ranked lists."""

from __future__ import annotations

RRF_K = 60
# Measured on QMSum and the chat dev set: see docs/benchmarks.md. "speaker" and "time" are the
# vector arm narrowed to the people a question names and to the time it speaks of; "graph" the
# keyword arm for the people the graph says a question describes. The speaker arm weighs less
# than the vector arm: a question may name the wrong person, or the one a turn was said to, and
# at 1.0 their own turns crowded out the right one (at 0.6 no set lost a point).
RRF_WEIGHTS = {"vector": 1.0, "keyword": 0.5, "speaker": 0.6, "time": 0.5, "graph": 0.5}


def fuse(lists: dict[str, list[tuple[int, float]]]) -> tuple[dict[int, float], dict[int, dict[str, int]]]:
    """Weighted reciprocal-rank fusion of the retrievers' ranked rows: fused scores and each row's ranks."""
    fused: dict[int, float] = {}
    ranks: dict[int, dict[str, int]] = {}
    for name, rows in lists.items():
        for rank, (row_id, _score) in enumerate(rows, start=1):
            fused[row_id] = fused.get(row_id, 0.0) + RRF_WEIGHTS[name] / (RRF_K + rank)
            ranks.setdefault(row_id, {})[name] = rank
    return fused, ranks
