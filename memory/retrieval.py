"""Hybrid passage retrieval inside Postgres: pgvector neighbours and full-text rank, fused by
reciprocal rank, diversified with MMR, trimmed to the caller's budget.

Access (organisation, readable categories, personal scope) and time (current or as of a day)
are conditions of the same SQL statements that rank, never a filter applied afterwards.
"""

from __future__ import annotations

import hashlib
import math
import time
from dataclasses import dataclass, field
from datetime import date, datetime
from itertools import combinations
from typing import Any

import numpy as np
from django.core.cache import cache
from django.db import connection, transaction

from brain.actors import Actor
from memory.access import believed_sql, readable_clause, readable_sql
from memory.embedding import get_embedder

RRF_K = 60
MODES = ("auto", "vector", "keyword")
BM25_K1, BM25_B = 1.2, 0.75
STATS_SECONDS = 900
GATHER_TERMS, DENSE_MATCHES, MAX_SCORED = 8, 3000, 5000
RRF_WEIGHTS = {"vector": 1.0, "keyword": 0.5}  # measured on QMSum: see docs/benchmarks.md
NEAR_DUPLICATE = 0.92  # MMR only pushes down passages this alike to one already picked


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


def access_and_time(actor: Actor, as_of: date | None, include_superseded: bool = False) -> tuple[str, dict[str, Any]]:
    """The WHERE clause (rows aliased ``c``) every retriever runs under: who may see it and what
    was believed then (``memory.access``)."""
    access, params = readable_sql(actor)
    time_rule, time_params = believed_sql(as_of, include_superseded)
    return f"{access} AND {time_rule}", {**params, **time_params}


def fuse(lists: dict[str, list[tuple[int, float]]]) -> tuple[dict[int, float], dict[int, dict[str, int]]]:
    """Weighted reciprocal-rank fusion of the retrievers' ranked rows: fused scores and each row's ranks."""
    fused: dict[int, float] = {}
    ranks: dict[int, dict[str, int]] = {}
    for name, rows in lists.items():
        for rank, (row_id, _score) in enumerate(rows, start=1):
            fused[row_id] = fused.get(row_id, 0.0) + RRF_WEIGHTS[name] / (RRF_K + rank)
            ranks.setdefault(row_id, {})[name] = rank
    return fused, ranks


def vector_candidates(
    vector: np.ndarray, where: str, params: dict[str, Any], limit: int, table: str = "memory_chunk"
) -> list[tuple[int, float]]:
    # Only vectors of the query's model are compared: during a switch of models, rows not yet
    # re-embedded are left to the keyword arm.
    model = get_embedder().name[:200]
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SET LOCAL hnsw.ef_search = %s", [max(40, limit * 2)])
        cursor.execute("SET LOCAL hnsw.iterative_scan = relaxed_order")
        cursor.execute(
            f"SELECT c.id, c.embedding <=> %(vec)s::vector AS distance FROM {table} c WHERE {where} "
            "AND c.embedding_model = %(model)s ORDER BY c.embedding <=> %(vec)s::vector LIMIT %(limit)s",
            {**params, "vec": "[" + ",".join(f"{x:.6f}" for x in vector) + "]", "limit": limit, "model": model},
        )
        rows = cursor.fetchall()
    rows.sort(key=lambda row: row[1])  # relaxed_order may return neighbours slightly out of order
    return [(row[0], 1.0 - float(row[1])) for row in rows]


def keyword_candidates(
    query: str, where: str, params: dict[str, Any], limit: int, table: str = "memory_chunk"
) -> list[tuple[int, float]]:
    """BM25 over the chunks' tsvectors: Postgres stems and drops stop words, we weigh the terms.

    A chunk matches when it holds any query term; each term counts by its inverse document
    frequency among the rows the caller may see, its frequency in the chunk and the chunk's
    length. The statistics never count rows the caller cannot see, so no score depends on them.
    """
    with connection.cursor() as cursor:
        cursor.execute("SELECT array_agg(DISTINCT lexeme) FROM unnest(to_tsvector('english', %s))", [query])
        lexemes: list[str] = cursor.fetchone()[0] or []
    if not lexemes:
        return []
    total, average, frequencies = _term_statistics(params, lexemes, table)
    weighted = [(lx, _idf(total, frequencies[lx])) for lx in lexemes if frequencies.get(lx)]
    if not weighted:
        return []
    # Chunks are gathered through the rarer terms only: a term in most chunks would drag nearly
    # the whole organisation into scoring while adding little to any score. It is still scored.
    by_rarity = sorted((lx for lx, _ in weighted), key=lambda lx: frequencies[lx])
    gather = [lx for lx in by_rarity if frequencies[lx] < common_cap(total)][:GATHER_TERMS] or by_rarity[:2]
    # Per term: its weight when the chunk holds it. Passages are short, so a term's presence carries
    # nearly all of BM25's term-frequency factor, and testing presence keeps the scoring cheap.
    presence = " + ".join(
        f"(CASE WHEN c.search @@ %(term{i})s::tsquery THEN %(idf{i})s ELSE 0 END)" for i in range(len(weighted))
    )
    terms = {f"term{i}": _quoted(lx) for i, (lx, _) in enumerate(weighted)}
    idfs = {f"idf{i}": idf for i, (_, idf) in enumerate(weighted)}
    # At most MAX_SCORED matching rows are scored: on a very large organisation whose question
    # terms are everywhere, the keyword arm stays fast and the vector arm carries the ranking.
    sql = (
        f"SELECT id, score FROM (SELECT c.id, ({presence}) * %(k1p1)s / (1 + %(k1)s * (1 - %(b)s + %(b)s * "
        f"length(c.search) / %(avg)s)) AS score FROM {table} c WHERE {where} "
        "AND c.search @@ to_tsquery('simple', %(any)s) LIMIT %(scan)s) scored ORDER BY score DESC LIMIT %(limit)s"
    )
    values = {**params, **terms, **idfs, "k1": BM25_K1, "k1p1": BM25_K1 + 1, "b": BM25_B, "avg": max(average, 1.0),
              "limit": limit, "scan": MAX_SCORED}  # fmt: skip
    # Where many chunks hold the terms, the best BM25 scores are among chunks holding all of the
    # rarest terms, then two of them: score those first, widening only when they are too few.
    dense = len(gather) >= 2 and sum(frequencies[lx] for lx in gather) > DENSE_MATCHES
    rarest = by_rarity[:4] if dense else []
    widening = [" & ".join(_quoted(lx) for lx in rarest)] if len(rarest) > 2 else []
    widening += [" | ".join(f"({_quoted(a)} & {_quoted(b)})" for a, b in combinations(rarest, 2))] if rarest else []
    widening.append(" | ".join(_quoted(lx) for lx in gather))
    rows: list[tuple[int, float]] = []
    for condition in widening:
        rows = _fetch(sql, {**values, "any": condition})
        if len(rows) >= limit:
            break
    return rows


def _fetch(sql: str, params: dict[str, Any]) -> list[tuple[int, float]]:
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return [(row[0], float(row[1])) for row in cursor.fetchall()]


def _quoted(lexeme: str) -> str:
    """A lexeme as a tsquery literal, taken as is (no second stemming)."""
    return "'" + lexeme.replace("\\", "\\\\").replace("'", "''") + "'"


def _idf(total: int, frequency: int) -> float:
    return math.log(1 + (total - frequency + 0.5) / (frequency + 0.5))


def common_cap(total: int) -> int:
    """How many passages make a term common: a tenth of them, within 300 to 2,000."""
    return max(300, min(2000, total // 10))


def _term_statistics(params: dict[str, Any], lexemes: list[str], table: str) -> tuple[int, float, dict[str, int]]:
    """Row count, average length and per-term document frequency over the rows the caller may
    see (``readable_sql``'s parameters in ``params``), cached for a few minutes per audience:
    ranking needs their proportions, not the last chunk ingested."""
    access = {k: params[k] for k in ("org", "cats", "user")}
    where = readable_clause("c")
    audience = hashlib.md5(f"{access['org']}:{sorted(access['cats'])}:{access['user']}".encode()).hexdigest()
    key = f"bm25:{table}:{audience}"
    totals = cache.get(key)
    if totals is None:
        with connection.cursor() as cursor:
            # The count comes from the organisation index; the average length from a sample.
            cursor.execute(
                f"SELECT (SELECT count(*) FROM {table} c WHERE {where}), coalesce((SELECT avg(length(search)) "
                f"FROM (SELECT c.search FROM {table} c WHERE {where} LIMIT 2000) sample), 1)",
                access,
            )
            count, average = cursor.fetchone()
        totals = (int(count), float(average))
        cache.set(key, totals, STATS_SECONDS)
    keys = {lx: f"{key}:{hashlib.md5(lx.encode()).hexdigest()}" for lx in lexemes}
    cached = cache.get_many(list(keys.values()))
    frequencies = {lx: cached[k] for lx, k in keys.items() if k in cached}
    missing = [lx for lx in lexemes if lx not in frequencies]
    if missing:
        with connection.cursor() as cursor:
            # Counting stops at common_cap(): past it a term is common, its weight is small
            # either way, and an exact count would read much of the table.
            cursor.execute(
                f"SELECT q.lexeme, (SELECT count(*) FROM (SELECT 1 FROM {table} c WHERE {where} "
                "AND c.search @@ to_tsquery('simple', quote_literal(q.lexeme)) LIMIT %(cap)s) hits) "
                "FROM unnest(%(missing)s::text[]) AS q(lexeme)",
                {**access, "cap": common_cap(totals[0]), "missing": missing},
            )
            found = dict(cursor.fetchall())
        frequencies.update(found)
        cache.set_many({keys[lx]: n for lx, n in found.items()}, STATS_SECONDS)
    return totals[0], totals[1], frequencies


def _mmr(order: list[int], fused: dict[int, float], vectors: dict[int, np.ndarray], k: int, weight: float) -> list[int]:
    """Maximal marginal relevance, applied to near-duplicates only: related neighbouring passages
    are often all needed (a discussion spans many turns), copies of one passage are not."""
    pool = [cid for cid in order if cid in vectors]
    if weight >= 1.0 or len(pool) <= 1:
        return order[:k]
    matrix = np.stack([vectors[cid] for cid in pool])
    relevance = np.array([fused[cid] for cid in pool]) / max(fused[cid] for cid in pool)
    likeness = np.full(len(pool), -1.0)  # highest similarity to anything chosen so far
    available = np.ones(len(pool), dtype=bool)
    chosen: list[int] = []
    for _ in range(min(k, len(pool))):
        value = weight * relevance - (1 - weight) * np.maximum(likeness, 0)
        value[~available] = -np.inf
        pick = int(np.argmax(value))
        chosen.append(pool[pick])
        available[pick] = False
        similarity = matrix @ matrix[pick]
        likeness = np.maximum(likeness, np.where(similarity >= NEAR_DUPLICATE, similarity, 0.0))
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
    vector: np.ndarray | None = None,
) -> SearchResult:
    """The one passage search every interface uses. ``diversity`` is MMR's relevance weight (1 = off);
    ``vector`` is the query's embedding when the caller already has it."""
    started = time.perf_counter()
    candidates = max(candidates, top_k * 2)
    timings: dict[str, float] = {}
    where, params = access_and_time(actor, as_of)
    lists: dict[str, list[tuple[int, float]]] = {}
    if mode in ("auto", "vector"):
        t = time.perf_counter()
        vector = get_embedder().embed([query])[0] if vector is None else vector
        timings["embed"] = (time.perf_counter() - t) * 1000
        t = time.perf_counter()
        lists["vector"] = vector_candidates(vector, where, params, candidates)
        timings["vector"] = (time.perf_counter() - t) * 1000
    if mode in ("auto", "keyword"):
        t = time.perf_counter()
        lists["keyword"] = keyword_candidates(query, where, params, candidates)
        timings["keyword"] = (time.perf_counter() - t) * 1000
    t = time.perf_counter()
    fused, ranks = fuse(lists)
    scores: dict[int, dict[str, float]] = {}
    for name, rows in lists.items():
        for cid, score in rows:
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
        return {row[0]: _parse_vector(row[1]) for row in cursor.fetchall()}


def _parse_vector(value: Any) -> np.ndarray:
    if isinstance(value, str):  # a raw cursor returns pgvector's text form: "[0.1,0.2,...]"
        return np.array(value.strip("[]").split(","), dtype=np.float32)
    return np.asarray(value, dtype=np.float32)


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
