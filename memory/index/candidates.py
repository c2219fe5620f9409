"""The two retrievers inside Postgres: pgvector nearest neighbours and BM25 over tsvectors,
each under the caller's access and time clause.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass, field
from datetime import date, datetime
from itertools import combinations
from typing import Any, Literal, get_args

from django.conf import settings
from django.core.cache import cache
from django.db import connections, transaction

from brain.core.actors import Actor
from brain.infra.replicas import read_alias
from memory.access import READABLE_SQL, Clause, readable_and_believed
from memory.index.serving import QueryVector

BM25_K1, BM25_B = 1.2, 0.75
STATS_SECONDS = 900
GATHER_TERMS, DENSE_MATCHES, MAX_SCORED = 8, 3000, 5000
# Rows holding every one of a question's rarest terms score alike on them, so a sample of this
# many is enough to rank the best of them (measured: docs/benchmarks-log.md, "Search latency").
MAX_SCORED_ALL_RAREST = 1500

# The statements below write a table name and a WHERE clause into their text; nothing else is
# interpolated. The table is one of TABLES, the clause a ``memory.access.Clause`` (its text one
# of that module's constants), and every value a caller gives is a %(name)s parameter.
Table = Literal["memory_chunk", "memory_fact"]
TABLES = frozenset(get_args(Table))


def _table(name: Table) -> str:
    if name not in TABLES:
        raise ValueError(f"not a table the retrievers read: {name!r}")
    return name


# Narrowings an arm may add to its clause (passages, aliased ``c``): by speaker, by when said.
SPEAKER_SQL = "c.speaker = ANY(%(speakers)s)"
SAID_BETWEEN_SQL = "c.said_at >= %(said_from)s AND c.said_at < %(said_to)s"
NARROWINGS = frozenset({SPEAKER_SQL, SAID_BETWEEN_SQL})


@dataclass(frozen=True)
class Narrowing:
    """A further condition on passages: one of ``NARROWINGS``, its values only in ``params``."""

    sql: str
    params: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.sql not in NARROWINGS:
            raise ValueError("not a narrowing built by memory.index.candidates")


# Filters a search may add to every arm's clause (``memory.search.filters.SearchFilters``), for
# passages aliased ``c``: a kind of source, who said it, a category, and the passage's date on or
# after / before a moment (its own time, else its document's date, else when it was recorded, as
# ``memory.access.said_by_sql`` dates it). Their values are parameters named ``filter_*``, apart
# from the arms' own (``Narrowing``) and the clause's.
FROM_SOURCE_SQL = (
    "c.document_id IN (SELECT id FROM memory_document WHERE org_id = %(org)s AND source_kind = %(filter_kind)s)"
)
SAID_BY_WHOM_SQL = "c.speaker = %(filter_speaker)s"
IN_CATEGORY_SQL = "c.category_id = %(filter_category)s"
_DATED_ON = (
    "(c.said_at {op} %({p})s OR (c.said_at IS NULL AND c.document_id IN (SELECT id FROM memory_document "
    "WHERE org_id = %(org)s AND coalesce(occurred_at, recorded_at) {op} %({p})s)))"
)
SAID_FROM_SQL = _DATED_ON.format(op=">=", p="filter_from")
SAID_UNTIL_SQL = _DATED_ON.format(op="<=", p="filter_until")
FILTERS = (FROM_SOURCE_SQL, SAID_BY_WHOM_SQL, IN_CATEGORY_SQL, SAID_FROM_SQL, SAID_UNTIL_SQL)


@dataclass(frozen=True)
class Filtered:
    """A retrieval clause with filters after it: a ``memory.access.Clause`` and texts of ``FILTERS``
    (in that order, each once), their values only in ``values``. Every arm reads it as it reads a
    clause (``sql``, ``params``), so a filter holds in each of them."""

    clause: Clause
    filters: tuple[str, ...]
    values: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not isinstance(self.clause, Clause):
            raise ValueError("a filtered clause starts from a memory.access clause")
        if list(self.filters) != [f for f in FILTERS if f in self.filters]:
            raise ValueError("not filters built by memory.index.candidates")
        if any(not name.startswith("filter_") for name in self.values):
            raise ValueError("a filter's value must be named filter_*")

    @property
    def sql(self) -> str:
        return " AND ".join([self.clause.sql, *self.filters])

    @property
    def few(self) -> bool:
        """Whether the filters are likely to leave few rows, as the arms' narrowings do: one
        person's words, or a window of days. A kind of source or a category may hold most rows."""
        return SAID_BY_WHOM_SQL in self.filters or {SAID_FROM_SQL, SAID_UNTIL_SQL} <= set(self.filters)

    @property
    def params(self) -> dict[str, Any]:
        return {**self.clause.params, **self.values}


Where = Clause | Filtered  # what a retriever runs under


def access_and_time(actor: Actor, as_of: date | None, include_superseded: bool = False) -> Clause:
    """The WHERE clause (rows aliased ``c``) every retriever runs under: who may see it and what
    was believed then (``memory.access``)."""
    return readable_and_believed(actor, as_of, include_superseded)


def vector_candidates(
    vector: QueryVector, where: Where, limit: int, table: Table = "memory_chunk", narrowing: Narrowing | None = None
) -> list[tuple[int, float]]:
    """The rows nearest the query's vector (``memory.index.org_indexes`` for the indexes).

    An audience that sees fewer than ``BRAIN_ORG_INDEX_ROWS`` rows is searched exactly: its rows
    come through the organisation and category b-trees and are all compared, a few milliseconds
    at that size. A larger one walks its organisation's HNSW index: the planner, left to itself,
    takes the exact plan for tens of thousands of rows, because it does not count the cost of
    fetching each vector, and that is ten times slower."""
    # Only vectors of the query's model are compared (memory.index.serving).
    narrow = f" AND {narrowing.sql}" if narrowing is not None else ""
    exact = visible_rows(where, table) < settings.BRAIN_ORG_INDEX_ROWS
    planner: list[str] = []
    if exact:
        planner.append("SET LOCAL enable_indexscan = off")  # the b-trees still serve, as bitmaps
    else:
        if narrowing is None and not (isinstance(where, Filtered) and where.few):
            # With sorting priced out, the ordered scan of the organisation's HNSW index is
            # the plan; an organisation without one yet (beat builds it) is still sorted.
            # A narrowed search (or one filtered to few rows: ``Filtered.few``) is left to the
            # planner: a speaker's turns or a month's are few, and their b-tree and a sort beat
            # walking the graph for them. Filtered by kind or category, the graph is walked
            # with the filter applied as it goes (iterative scan), as without filters.
            planner.append("SET LOCAL enable_sort = off")
        planner += [
            f"SET LOCAL hnsw.ef_search = {max(40, int(limit) * 2)}",
            "SET LOCAL hnsw.iterative_scan = relaxed_order",
        ]
    # Searched exactly, rows at the same distance (a message posted twice) come in the order of
    # their ids, so one question gets the same passages every time; the graph's order is its own.
    nearest = (
        f"SELECT c.id, c.embedding <=> %(vec)s::vector AS distance FROM {_table(table)} c "  # noqa: S608 (see Table)
        f"WHERE {where.sql}{narrow} AND c.embedding_model = %(model)s "
        "ORDER BY c.embedding <=> %(vec)s::vector" + (", c.id" if exact else "") + " LIMIT %(limit)s"
    )
    params = {
        **where.params,
        **(narrowing.params if narrowing else {}),
        "limit": limit,
        "model": vector.model,
        "vec": "[" + ",".join(f"{x:.6f}" for x in vector.values) + "]",
    }
    db = connections[read_alias()]
    if db.in_atomic_block:
        # Inside the caller's transaction: a savepoint of its own, its settings one by one, rolled
        # back after reading (it wrote nothing) so that the settings end with it, not with the
        # caller's transaction.
        with transaction.atomic(using=db.alias), db.cursor() as cursor:
            for statement in planner:
                cursor.execute(statement)
            cursor.execute(nearest, params)
            rows = cursor.fetchall()
            transaction.set_rollback(True, using=db.alias)
    else:
        # One round trip: the settings and the statement go as one simple query, which PostgreSQL
        # runs as one transaction, so SET LOCAL ends with it (four round trips fewer per arm).
        with db.cursor() as cursor:
            cursor.execute("; ".join([*planner, nearest]), params)
            while cursor.description is None and cursor.nextset():
                pass  # past the settings' results to the statement's rows
            rows = cursor.fetchall()
    rows.sort(key=lambda row: row[1])  # relaxed_order may return neighbours slightly out of order
    return [(row[0], 1.0 - float(row[1])) for row in rows]


def keyword_candidates(query: str, where: Where, limit: int, table: Table = "memory_chunk") -> list[tuple[int, float]]:
    """BM25 over the chunks' tsvectors: Postgres stems and drops stop words, we weigh the terms.

    A chunk matches when it holds any query term; each term counts by its inverse document
    frequency among the rows the caller may see, its frequency in the chunk and the chunk's
    length. The statistics never count rows the caller cannot see, so no score depends on them.
    """
    with connections[read_alias()].cursor() as cursor:
        cursor.execute("SELECT array_agg(DISTINCT lexeme) FROM unnest(to_tsvector('english', %s))", [query])
        lexemes: list[str] = cursor.fetchone()[0] or []
    if not lexemes:
        return []
    total, average, frequencies = _term_statistics(where, lexemes, table)
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
        f"SELECT id, score FROM (SELECT c.id, ({presence}) * %(k1p1)s / (1 + %(k1)s * (1 - %(b)s + %(b)s * "  # noqa: S608 (see Table)
        f"length(c.search) / %(avg)s)) AS score FROM {_table(table)} c WHERE {where.sql} "
        "AND c.search @@ to_tsquery('simple', %(any)s) LIMIT %(scan)s) scored ORDER BY score DESC, id LIMIT %(limit)s"
    )
    values = {
        **where.params,
        **terms,
        **idfs,
        "k1": BM25_K1,
        "k1p1": BM25_K1 + 1,
        "b": BM25_B,
        "avg": max(average, 1.0),
        "limit": limit,
    }
    # Where many chunks hold the terms, the best BM25 scores are among chunks holding all of the
    # rarest terms, then two of them: score those first, widening only when they are too few.
    dense = len(gather) >= 2 and sum(frequencies[lx] for lx in gather) > DENSE_MATCHES
    rarest = by_rarity[:4] if dense else []
    widening = [(" & ".join(_quoted(lx) for lx in rarest), MAX_SCORED_ALL_RAREST)] if len(rarest) > 2 else []
    if rarest:
        widening.append((" | ".join(f"({_quoted(a)} & {_quoted(b)})" for a, b in combinations(rarest, 2)), MAX_SCORED))
    widening.append((" | ".join(_quoted(lx) for lx in gather), MAX_SCORED))
    rows: list[tuple[int, float]] = []
    for condition, scan in widening:
        rows = _fetch(sql, {**values, "any": condition, "scan": scan})
        if len(rows) >= limit:
            break
    return rows


def first_said_in(where: Where, spans: list[tuple[datetime, datetime]]) -> int | None:
    """The index of the first span in which a passage the caller may read was said, or None: one
    statement, each span a range on the said-at index that stops at its first row."""
    if not spans:
        return None
    with connections[read_alias()].cursor() as cursor:
        cursor.execute(
            "SELECT s.n - 1 FROM unnest(%(froms)s::timestamptz[], %(tos)s::timestamptz[]) WITH ORDINALITY "  # noqa: S608 (a memory.access clause)
            f"AS s(said_from, said_to, n) WHERE EXISTS (SELECT 1 FROM memory_chunk c WHERE {where.sql} "
            "AND c.said_at >= s.said_from AND c.said_at < s.said_to) ORDER BY s.n LIMIT 1",
            {**where.params, "froms": [span[0] for span in spans], "tos": [span[1] for span in spans]},
        )
        row = cursor.fetchone()
    return None if row is None else int(row[0])


def _fetch(sql: str, params: dict[str, Any]) -> list[tuple[int, float]]:
    with connections[read_alias()].cursor() as cursor:
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


def _access(clause: Where) -> Clause:
    return Clause(READABLE_SQL, {k: clause.params[k] for k in ("org", "cats", "user")})


def with_counters(where: Clause) -> Clause:
    """``where`` with its audience's search counters (``memory.models.SearchEpoch``) read once,
    for every arm of one search to key what it caches by: read before anything is computed, so
    nothing cached under them is older than they are."""
    return Clause(where.sql, {**where.params, "counters": _counters(_access(where))})


def _counters(access: Clause) -> tuple[int, int]:
    """The counters of the organisation's shared rows and of the caller's own: (speakers, withdrawn)."""
    with connections[read_alias()].cursor() as cursor:
        cursor.execute(
            "SELECT coalesce(sum(speakers), 0), coalesce(sum(withdrawn), 0) FROM memory_searchepoch "
            "WHERE org_id = %(org)s AND owner_id IN (0, %(user)s)",
            access.params,
        )
        speakers, withdrawn = cursor.fetchone()
    return int(speakers), int(withdrawn)


def audience_of(clause: Where, *, with_speakers: bool = False) -> tuple[Clause, str]:
    """The access part of a retrieval clause (who may see a row, without the time rule), and a
    short key naming that audience as its rows stand, for what is cached per audience: the key
    changes when a shared row or one of the caller's own is withdrawn, and with ``with_speakers``
    also when a passage brings a new speaker (the counters ``with_counters`` put in the clause,
    else read now)."""
    access = _access(clause)
    speakers, withdrawn = clause.params.get("counters") or _counters(access)
    state = f"{withdrawn}:{speakers}" if with_speakers else f"{withdrawn}"
    audience = f"{access.params['org']}:{sorted(access.params['cats'])}:{access.params['user']}:{state}"
    return access, _digest(audience)


def _audience_totals(clause: Where, table: Table) -> tuple[str, int, float]:
    """The cache key of the audience's statistics, how many rows of ``table`` it may see and their
    average length, cached for a few minutes per audience: ranking and the choice of plan need
    the audience's size, not the last chunk ingested. Only rows the caller may see are counted."""
    access, audience = audience_of(clause)
    where, source = access.sql, _table(table)
    key = f"bm25:{source}:{audience}"
    totals = cache.get(key)
    if totals is None:
        with connections[read_alias()].cursor() as cursor:
            # The count comes from the organisation index; the average length from a sample.
            cursor.execute(
                f"SELECT (SELECT count(*) FROM {source} c WHERE {where}), coalesce((SELECT avg(length(search)) "  # noqa: S608 (see Table)
                f"FROM (SELECT c.search FROM {source} c WHERE {where} LIMIT 2000) sample), 1)",
                access.params,
            )
            count, average = cursor.fetchone()
        totals = (int(count), float(average))
        cache.set(key, totals, STATS_SECONDS)
    return key, totals[0], totals[1]


def visible_rows(clause: Where, table: Table) -> int:
    """How many rows of ``table`` the clause's audience may see, as of a few minutes ago at most."""
    return _audience_totals(clause, table)[1]


def _term_statistics(clause: Where, lexemes: list[str], table: Table) -> tuple[int, float, dict[str, int]]:
    """Row count, average length and per-term document frequency over the rows the caller may
    see (``READABLE_SQL`` with ``readable_sql``'s parameters, taken from ``clause``), cached for a
    few minutes per audience."""
    access = _access(clause)
    where, source = access.sql, _table(table)
    key, total, average = _audience_totals(clause, table)
    keys = {lx: f"{key}:{_digest(lx)}" for lx in lexemes}
    cached = cache.get_many(list(keys.values()))
    frequencies = {lx: cached[k] for lx, k in keys.items() if k in cached}
    missing = [lx for lx in lexemes if lx not in frequencies]
    if missing:
        with connections[read_alias()].cursor() as cursor:
            # Counting stops at common_cap(): past it a term is common, its weight is small
            # either way, and an exact count would read much of the table.
            cursor.execute(
                f"SELECT q.lexeme, (SELECT count(*) FROM (SELECT 1 FROM {source} c WHERE {where} "  # noqa: S608 (see Table)
                "AND c.search @@ to_tsquery('simple', quote_literal(q.lexeme)) LIMIT %(cap)s) hits) "
                "FROM unnest(%(missing)s::text[]) AS q(lexeme)",
                {**access.params, "cap": common_cap(total), "missing": missing},
            )
            found = dict(cursor.fetchall())
        frequencies.update(found)
        # A term no readable row holds is not cached: the first document that says it must be
        # found as soon as it is ingested, and the search index answers for a missing term at once.
        cache.set_many({keys[lx]: n for lx, n in found.items() if n}, STATS_SECONDS)
    # The cached row count may predate rows that hold a term counted just now.
    return max(total, *frequencies.values(), 0), average, frequencies


def _digest(text: str) -> str:
    """A short stable cache-key part (not a security measure)."""
    return hashlib.md5(text.encode(), usedforsecurity=False).hexdigest()
