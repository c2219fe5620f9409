"""Weighted reciprocal-rank fusion of ranked lists."""

from __future__ import annotations

RRF_K = 60
# Measured on QMSum and the chat dev set: see docs/benchmarks-log.md. "speaker" and "time" are the
# vector arm narrowed to the people a question names and to the time it speaks of; "graph" the
# keyword arm for the people the graph says a question describes. The speaker arm weighs less
# than the vector arm: a question may name the wrong person, or the one a turn was said to, and
# at 1.0 their own turns crowded out the right one (at 0.6 no set lost a point).
# "side" is the time arm for one side of an event or a date ("before the launch").
RRF_WEIGHTS = {"vector": 1.0, "keyword": 0.5, "speaker": 0.6, "time": 0.5, "side": 0.5, "graph": 0.5}
# A time arm holding more than this share of the vector arm's own candidates narrows nothing ("in
# May" of a chat that all happened in May): fused beside it, it would only weigh the vector arm up
# against the others (measured: docs/benchmarks-log.md, "A time without a year"). One side of an event
# is the question's own condition even when it holds most of them, and is left out only when it
# holds nearly all ("Before or after an event").
REPEAT_SHARES = {"time": 0.5, "side": 0.8}


def repeats(narrowed: list[tuple[int, float]], nearest: list[tuple[int, float]], share: float) -> bool:
    """Whether a narrowed arm's rows hold more than ``share`` of the vector arm's."""
    if not narrowed or not nearest:
        return False
    held = {row_id for row_id, _ in narrowed}
    return sum(row_id in held for row_id, _ in nearest) > share * len(nearest)


def fuse(lists: dict[str, list[tuple[int, float]]]) -> tuple[dict[int, float], dict[int, dict[str, int]]]:
    """Weighted reciprocal-rank fusion of the retrievers' ranked rows: fused scores and each row's ranks."""
    fused: dict[int, float] = {}
    ranks: dict[int, dict[str, int]] = {}
    for name, rows in lists.items():
        for rank, (row_id, _score) in enumerate(rows, start=1):
            fused[row_id] = fused.get(row_id, 0.0) + RRF_WEIGHTS[name] / (RRF_K + rank)
            ranks.setdefault(row_id, {})[name] = rank
    return fused, ranks


AGREED_PLACE = 3  # a passage every word-and-meaning arm ranks first is never found below this place


def keep_agreed(scores: dict[int, float], ranks: dict[int, dict[str, int]]) -> dict[int, float]:
    """Scores in which a passage that both the keyword and the vector arm rank first stands at
    least at ``AGREED_PLACE``: what the reranking lends to its neighbours may not bury an exact
    match both arms agree on."""
    agreed = [row_id for row_id, rank in ranks.items() if rank.get("vector") == 1 and rank.get("keyword") == 1]
    if not agreed or agreed[0] not in scores or len(scores) <= AGREED_PLACE:
        return scores
    return _at_least_at(scores, agreed[0], AGREED_PLACE)


# How far the keyword arm's first passage must score above its second for the words only it holds
# to count as what the question asks for (docs/benchmarks-log.md, "A word one passage holds").
KEYWORD_MARGIN = 2.0


def keep_distinct(scores: dict[int, float], keyword: list[tuple[int, float]]) -> dict[int, float]:
    """Scores in which the keyword arm's first passage stands at least at ``AGREED_PLACE`` when it
    is the only one the keyword arm found, or scores ``KEYWORD_MARGIN`` times the next: it holds a
    word few passages hold (a codename, an error code, a tool's name), which the question asks for
    whatever the meaning arm finds near it. Rank fusion alone gives the keyword arm's first place
    less than the meaning arm's last candidate, so such a passage was never shown. The caller passes
    the rows only where this holds (``memory.search.passages``: written passages, not turns)."""
    if not keyword or keyword[0][0] not in scores or len(scores) <= AGREED_PLACE:
        return scores
    if len(keyword) > 1 and keyword[0][1] < KEYWORD_MARGIN * keyword[1][1]:
        return scores
    return _at_least_at(scores, keyword[0][0], AGREED_PLACE)


def _at_least_at(scores: dict[int, float], row_id: int, place: int) -> dict[int, float]:
    ahead = sorted((score for other, score in scores.items() if other != row_id), reverse=True)
    floor = ahead[place - 1]  # the score of the passage it must stay above
    if scores[row_id] > floor:
        return scores
    return {**scores, row_id: floor + 1e-9}
