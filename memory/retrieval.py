"""Hybrid passage retrieval inside Postgres: pgvector neighbours and full-text rank, fused by
reciprocal rank, diversified with MMR, trimmed to the caller's budget.

Access (organisation, readable categories, personal scope) and time (current or as of a day)
are conditions of the same SQL statements that rank, never a filter applied afterwards.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from datetime import time as dtime
from typing import Any

import numpy as np
from django.db import connection, transaction

from brain.actors import Actor
from memory.access import readable_category_ids
from memory.embedding import get_embedder

RRF_K = 60
MODES = ("auto", "vector", "keyword")
WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)?", re.UNICODE)


@dataclass
class Hit:
    chunk_id: int
    document_id: int
    title: str
    heading: str
    text: str
    source_url: str
    source_kind: str
    ordinal: int
    recorded_at: datetime
    occurred_at: datetime | None
    score: float
    ranks: dict[str, int] = field(default_factory=dict)
    scores: dict[str, float] = field(default_factory=dict)


@dataclass
class SearchResult:
    hits: list[Hit]
    mode: str
    timings_ms: dict[str, float]
    candidates: dict[str, int]


def end_of_day(day: date) -> datetime:
    return datetime.combine(day, dtime.max, tzinfo=UTC)


def keyword_query(text: str) -> str:
    """An OR of the question's words for to_tsquery: any word may match, more words rank higher."""
    words = [w.replace("’", "'").replace("'", "") for w in WORD.findall(text.lower())]
    return " | ".join(dict.fromkeys(w for w in words if w))


def _filters(actor: Actor, as_of: date | None) -> tuple[str, dict[str, Any]]:
    sql = "c.org_id = %(org)s AND c.category_id = ANY(%(cats)s) AND (c.scope = 'shared' OR c.owner_id = %(user)s)"
    params: dict[str, Any] = {"org": actor.org.pk, "cats": readable_category_ids(actor=actor), "user": actor.user.pk}
    if as_of is None:
        sql += " AND c.superseded_at IS NULL"
    else:
        sql += " AND c.recorded_at <= %(as_of)s AND (c.superseded_at IS NULL OR c.superseded_at > %(as_of)s)"
        params["as_of"] = end_of_day(as_of)
    return sql, params


def _vector_candidates(vector: np.ndarray, where: str, params: dict[str, Any], limit: int) -> list[tuple[int, float]]:
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SET LOCAL hnsw.ef_search = %s", [max(40, limit * 2)])
        cursor.execute("SET LOCAL hnsw.iterative_scan = relaxed_order")
        cursor.execute(
            f"SELECT c.id, c.embedding <=> %(vec)s::vector AS distance FROM memory_chunk c WHERE {where} "
            "ORDER BY c.embedding <=> %(vec)s::vector LIMIT %(limit)s",
            {**params, "vec": "[" + ",".join(f"{x:.6f}" for x in vector) + "]", "limit": limit},
        )
        rows = cursor.fetchall()
    rows.sort(key=lambda row: row[1])  # relaxed_order may return neighbours slightly out of order
    return [(row[0], 1.0 - float(row[1])) for row in rows]


def _keyword_candidates(query: str, where: str, params: dict[str, Any], limit: int) -> list[tuple[int, float]]:
    terms = keyword_query(query)
    if not terms:
        return []
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT c.id, ts_rank_cd(c.search, q, 1) AS rank "
            f"FROM memory_chunk c, to_tsquery('english', %(terms)s) q WHERE {where} AND c.search @@ q "
            "ORDER BY rank DESC LIMIT %(limit)s",
            {**params, "terms": terms, "limit": limit},
        )
        return [(row[0], float(row[1])) for row in cursor.fetchall()]


def _mmr(order: list[int], fused: dict[int, float], vectors: dict[int, np.ndarray], k: int, weight: float) -> list[int]:
    """Maximal marginal relevance: each next pick trades relevance against likeness to earlier picks."""
    if not vectors or weight >= 1.0:
        return order[:k]
    top = max(fused.values()) or 1.0
    chosen: list[int] = []
    pool = list(order)
    while pool and len(chosen) < k:
        best, best_value = pool[0], -1e9
        for cid in pool:
            likeness = max(
                (float(vectors[cid] @ vectors[o]) for o in chosen if cid in vectors and o in vectors), default=0
            )
            value = weight * fused[cid] / top - (1 - weight) * likeness
            if value > best_value:
                best, best_value = cid, value
        chosen.append(best)
        pool.remove(best)
    return chosen


def search_chunks(
    *,
    actor: Actor,
    query: str,
    top_k: int = 5,
    mode: str = "auto",
    as_of: date | None = None,
    candidates: int = 50,
    diversity: float = 0.8,
) -> SearchResult:
    """The one passage search every interface uses. ``diversity`` is MMR's relevance weight (1 = off)."""
    started = time.perf_counter()
    timings: dict[str, float] = {}
    where, params = _filters(actor, as_of)
    lists: dict[str, list[tuple[int, float]]] = {}
    if mode in ("auto", "vector"):
        t = time.perf_counter()
        vector = get_embedder().embed([query])[0]
        timings["embed"] = (time.perf_counter() - t) * 1000
        t = time.perf_counter()
        lists["vector"] = _vector_candidates(vector, where, params, candidates)
        timings["vector"] = (time.perf_counter() - t) * 1000
    if mode in ("auto", "keyword"):
        t = time.perf_counter()
        lists["keyword"] = _keyword_candidates(query, where, params, candidates)
        timings["keyword"] = (time.perf_counter() - t) * 1000
    t = time.perf_counter()
    fused: dict[int, float] = {}
    ranks: dict[int, dict[str, int]] = {}
    scores: dict[int, dict[str, float]] = {}
    for name, rows in lists.items():
        for rank, (cid, score) in enumerate(rows, start=1):
            fused[cid] = fused.get(cid, 0.0) + 1.0 / (RRF_K + rank)
            ranks.setdefault(cid, {})[name] = rank
            scores.setdefault(cid, {})[name] = round(score, 4)
    order = sorted(fused, key=lambda cid: -fused[cid])
    pool = order[: max(top_k * 3, top_k)]
    vectors = _vectors(pool) if diversity < 1.0 and len(pool) > top_k else {}
    picked = _mmr(pool, fused, vectors, top_k, diversity)
    hits = _load_hits(picked, fused, ranks, scores)
    timings["fuse"] = (time.perf_counter() - t) * 1000
    timings["total"] = (time.perf_counter() - started) * 1000
    return SearchResult(
        hits=hits,
        mode=mode,
        timings_ms={k: round(v, 2) for k, v in timings.items()},
        candidates={name: len(rows) for name, rows in lists.items()},
    )


def _vectors(ids: list[int]) -> dict[int, np.ndarray]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT id, embedding FROM memory_chunk WHERE id = ANY(%s)", [ids])
        return {row[0]: np.asarray(row[1], dtype=np.float32) for row in cursor.fetchall()}


def _load_hits(
    ids: list[int], fused: dict[int, float], ranks: dict[int, dict[str, int]], scores: dict[int, dict[str, float]]
) -> list[Hit]:
    if not ids:
        return []
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT c.id, c.document_id, c.title, c.heading, c.text, d.source_url, d.source_kind, c.ordinal, "
            "c.recorded_at, d.occurred_at FROM memory_chunk c JOIN memory_document d ON d.id = c.document_id "
            "WHERE c.id = ANY(%s)",
            [ids],
        )
        rows = {row[0]: row for row in cursor.fetchall()}
    return [
        Hit(
            chunk_id=cid,
            document_id=rows[cid][1],
            title=rows[cid][2],
            heading=rows[cid][3],
            text=rows[cid][4],
            source_url=rows[cid][5],
            source_kind=rows[cid][6],
            ordinal=rows[cid][7],
            recorded_at=rows[cid][8],
            occurred_at=rows[cid][9],
            score=round(fused[cid], 5),
            ranks=ranks.get(cid, {}),
            scores=scores.get(cid, {}),
        )
        for cid in ids
        if cid in rows
    ]
