"""Hybrid passage search: the retrievers' candidates fused, diversified with MMR and trimmed.

Access (organisation, readable categories, personal scope) and time (current or as of a day)
are conditions of the same SQL statements that rank, never a filter applied afterwards.
"""

from __future__ import annotations

import math
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any

import numpy as np
from django.db import connections
from django.utils import timezone

from brain.core.actors import Actor
from brain.infra.replicas import read_alias
from memory.access import LEARNED, Clause
from memory.index.candidates import (
    SAID_BETWEEN_SQL,
    SPEAKER_SQL,
    Narrowing,
    Where,
    first_said_in,
    keyword_candidates,
    vector_candidates,
    with_counters,
)
from memory.index.fusion import REPEAT_SHARES, fuse, keep_agreed, keep_distinct, repeats
from memory.index.serving import QueryVector, query_vector
from memory.index.side_by_side import Started, may_run_apart, start
from memory.search.anchors import Anchor, anchor, anchored_window
from memory.search.expansion import people_behind
from memory.search.filters import SearchFilters, as_of_clause, filtered
from memory.search.relevance import above_floor
from memory.search.rerank import rerank
from memory.search.speakers import known_speakers, speakers_named, without_speakers
from memory.search.when import Window, window

MODES = ("auto", "vector", "keyword")
YEARS_BACK = 10  # how far back a month or day named without a year is looked for
NEAR_DUPLICATE = 0.92  # MMR only pushes down passages this alike to one already picked
COPY_LIKENESS = 0.97  # a listed passage this alike to a better one is folded into it (``floor``)


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
    speaker: str
    said_at: datetime | None
    score: float
    ranks: dict[str, int] = field(default_factory=dict)
    scores: dict[str, float] = field(default_factory=dict)
    more: int = 0  # further passages of the same document among the candidates, when grouped
    similarity: float | None = None  # cosine to the question, when it was embedded
    copies: list[int] = field(default_factory=list)  # documents saying the same, folded into this hit


@dataclass
class SearchResult:
    hits: list[Hit]
    mode: str
    timings_ms: dict[str, float]
    candidates: dict[str, int]
    found: list[int] = field(default_factory=list)  # every passage the arms found, best first


def _mmr(
    order: list[int],
    fused: dict[int, float],
    vectors: dict[int, np.ndarray],
    texts: dict[int, str],
    k: int,
    weight: float,
) -> list[int]:
    """Maximal marginal relevance, applied to near-duplicates only: related neighbouring passages
    are often all needed (a discussion spans many turns), copies of one passage are not. A copy
    (the same words as a passage already picked, whatever the title) waits until nothing else is
    left, whatever bonus its words earned: one text saying the date three times is one answer."""
    pool = [cid for cid in order if cid in vectors]
    if weight >= 1.0 or len(pool) <= 1:
        return order[:k]
    words = [" ".join(texts.get(cid, "").lower().split()) for cid in pool]
    copy = np.zeros(len(pool), dtype=bool)
    matrix = np.stack([vectors[cid] for cid in pool])
    relevance = np.array([fused[cid] for cid in pool]) / max(fused[cid] for cid in pool)
    likeness = np.full(len(pool), -1.0)  # highest similarity to anything chosen so far
    available = np.ones(len(pool), dtype=bool)
    chosen: list[int] = []
    for _ in range(min(k, len(pool))):
        value = weight * relevance - (1 - weight) * np.maximum(likeness, 0)
        value[copy] -= 2.0  # below anything that is not a copy (values lie in [-1, 1])
        value[~available] = -np.inf
        pick = int(np.argmax(value))
        chosen.append(pool[pick])
        available[pick] = False
        copy |= np.array([w == words[pick] for w in words])
        similarity = matrix @ matrix[pick]
        likeness = np.maximum(likeness, np.where(similarity >= NEAR_DUPLICATE, similarity, 0.0))
    return chosen


@dataclass(frozen=True)
class View:
    """One way to read a retrieval: how many passages, MMR's relevance weight (1 = off), one
    passage of each document, cut at the relevance floor (``search_chunks`` says how)."""

    top_k: int = 5
    diversity: float = 0.8
    per_document: bool = False
    floor: bool = False


def search_chunks(
    *,
    actor: Actor,
    query: str,
    top_k: int = 5,
    mode: str = "auto",
    as_of: date | None = None,
    candidates: int = 50,
    diversity: float = 0.8,
    vector: QueryVector | None = None,
    per_document: bool = False,
    floor: bool = False,
    filters: SearchFilters | None = None,
    as_of_by: str = LEARNED,
) -> SearchResult:
    """The one passage search every interface uses. ``diversity`` is MMR's relevance weight (1 = off);
    ``vector`` is the query's embedding when the caller already has it. ``per_document`` keeps
    each document's best passage only, with how many more of its passages were found. ``floor``
    cuts the list where the evidence ends (``relevance.above_floor``; not in keyword mode, which
    has no similarity to cut by). ``filters`` narrow every arm inside its SQL
    (``memory.search.filters``). ``as_of`` reads as ``as_of_by`` says: ``learned``, what Brain had
    recorded by the end of that day; ``said``, what the sources had said by then
    (``memory.access``, "What the sources had said by a moment")."""
    view = View(top_k=top_k, diversity=diversity, per_document=per_document, floor=floor)
    return search_views(
        actor=actor,
        query=query,
        views=[view],
        mode=mode,
        as_of=as_of,
        candidates=candidates,
        vector=vector,
        filters=filters,
        as_of_by=as_of_by,
    )[0]


def search_views(
    *,
    actor: Actor,
    query: str,
    views: Sequence[View],
    mode: str = "auto",
    as_of: date | None = None,
    candidates: int = 50,
    vector: QueryVector | None = None,
    filters: SearchFilters | None = None,
    as_of_by: str = LEARNED,
) -> list[SearchResult]:
    """``search_chunks`` read several ways from one retrieval: each view gets what its own search
    would (the arms gather ``candidates``, or twice the largest view's ``top_k``), and the arms run
    once. ``ask_company_memory`` reads its passages and its answer card's this way."""
    started = time.perf_counter()
    candidates = max(candidates, *(view.top_k * 2 for view in views))
    retrieved = _retrieve(actor, query, mode, as_of, candidates, vector, filters, as_of_by)
    results = []
    for view in views:
        result = _present(retrieved, query, mode, view)
        result.timings_ms["total"] = round((time.perf_counter() - started) * 1000, 2)
        results.append(result)
    return results


@dataclass
class _Retrieved:
    """What the arms found for a question, fused: the passages' scores and order, each one's ranks
    and scores by arm, the question's vector (the caller's in keyword mode) and the timings so far."""

    fused: dict[int, float]
    ranks: dict[int, dict[str, int]]
    scores: dict[int, dict[str, float]]
    order: list[int]
    lists: dict[str, list[tuple[int, float]]]
    vector: QueryVector | None
    timings: dict[str, float]


def _retrieve(
    actor: Actor,
    query: str,
    mode: str,
    as_of: date | None,
    candidates: int,
    vector: QueryVector | None,
    filters: SearchFilters | None,
    as_of_by: str,
) -> _Retrieved:
    started = time.perf_counter()
    timings: dict[str, float] = {}
    # The counters are read once for all its arms; an event is dated ("before the launch") among
    # all the passages the caller may read then, what is searched is only what passes the filters.
    dating = with_counters(as_of_clause(actor, as_of, as_of_by))
    where = filtered(dating, filters, actor.org)
    learned_on = as_of if as_of_by == LEARNED else None  # the graph as Brain knew it then, else now
    lists: dict[str, list[tuple[int, float]]] = {}
    # The arms run side by side where they may (``side_by_side``): the keyword arm needs only the
    # question, so it starts first and runs while the question is embedded.
    apart = may_run_apart()
    keyword = (
        start(lambda: keyword_candidates(query, where, candidates), apart=apart)
        if mode in ("auto", "keyword")
        else None
    )
    # The single-retriever modes stay pure, for investigating a search. In auto, the people a
    # question names are searched by the speaker arm, and the question is embedded without their
    # names, which every one of their turns carries (``speakers.without_speakers``). The keyword
    # arm keeps them: measured, taking them out there did not help (docs/benchmarks-log.md).
    t = time.perf_counter()
    people = _people(actor, query, dating, learned_on) if mode == "auto" else People([], [])
    asked = without_speakers(query, people.speakers) if people.speakers else query
    timings["people"] = (time.perf_counter() - t) * 1000
    if mode in ("auto", "vector"):
        t = time.perf_counter()
        vector = query_vector(actor.org, asked) if vector is None or asked != query else vector
        timings["embed"] = (time.perf_counter() - t) * 1000
        arms = (
            _conversation_arms(people, query, vector, (where, dating), candidates, as_of, apart)
            if mode == "auto"
            else {}
        )
        t = time.perf_counter()
        lists["vector"] = vector_candidates(vector, where, candidates)
        timings["vector"] = (time.perf_counter() - t) * 1000
        if mode == "auto":
            lists.update({name: arm.result() for name, arm in arms.items()})
            for name, share in REPEAT_SHARES.items():
                if repeats(lists.get(name, []), lists["vector"], share):
                    lists[name] = []  # the window holds most of what the question is near: no narrowing
            timings["conversation"] = sum(arm.ms for arm in arms.values())
    if keyword is not None:
        lists["keyword"] = keyword.result()
        timings["keyword"] = keyword.ms
    timings["retrieve"] = (time.perf_counter() - started) * 1000  # the arms, side by side or in turn
    t = time.perf_counter()
    fused, ranks = fuse(lists)
    if mode == "auto":
        fused = keep_distinct(keep_agreed(rerank(query, fused), ranks), _written_first(lists.get("keyword", [])))
    scores: dict[int, dict[str, float]] = {}
    for name, rows in lists.items():
        for cid, score in rows:
            scores.setdefault(cid, {})[name] = round(score, 4)
    order = sorted(fused, key=lambda cid: -fused[cid])
    timings["fuse"] = (time.perf_counter() - t) * 1000
    return _Retrieved(fused, ranks, scores, order, lists, vector, timings)


def _present(retrieved: _Retrieved, query: str, mode: str, view: View) -> SearchResult:
    """One view of a retrieval: its passages, chosen, diversified and cut as ``view`` says."""
    t = time.perf_counter()
    fused, ranks, scores, vector = retrieved.fused, retrieved.ranks, retrieved.scores, retrieved.vector
    order, top_k, diversity = retrieved.order, view.top_k, view.diversity
    more: dict[int, int] = {}
    if view.per_document:
        order, more = _best_of_each_document(order, query)
    pool = order[: max(top_k * 3, top_k)]
    diversify = diversity < 1.0 and len(pool) > top_k
    # One statement reads the pool's passages and, when MMR or the floor need them, their vectors.
    with_vectors = diversify or vector is not None
    loaded = _load_rows(pool if diversify else pool[:top_k], with_vectors=with_vectors)
    vectors = {cid: _parse_vector(row[-1]) for cid, row in loaded.items()} if with_vectors else {}
    texts = {cid: row[4] for cid, row in loaded.items()}
    picked = _mmr(pool, fused, vectors if diversify else {}, texts, top_k, diversity)
    hits = _hits(picked, loaded, fused, ranks, scores)
    for hit in hits:
        hit.more = more.get(hit.chunk_id, 0)
        hit.similarity = _cosine(vectors.get(hit.chunk_id), vector) if vector is not None else None
    if view.floor and vector is not None:
        hits = _fold_copies(above_floor(hits, vector.model), vectors)
    timings = dict(retrieved.timings)
    timings["fuse"] += (time.perf_counter() - t) * 1000  # with the fusion, what this view chose
    return SearchResult(
        hits=hits,
        mode=mode,
        timings_ms={k: round(v, 2) for k, v in timings.items()},
        candidates={name: len(rows) for name, rows in retrieved.lists.items()},
        found=order,
    )


@dataclass(frozen=True)
class People:
    """Whom a question is about: speakers it names or describes, and holders of a role it
    describes ("the person who leads support"), as the graph knows them."""

    speakers: list[str]
    role_holders: list[str]


def _people(actor: Actor, query: str, where: Clause, as_of: date | None) -> People:
    speakers = known_speakers(where)
    named = speakers_named(query, speakers)
    holders = people_behind(actor=actor, question=query, as_of=as_of)
    if holders:
        named = list(dict.fromkeys([*named, *speakers_named(" ".join(holders), speakers)]))
    return People(named, holders)


def _conversation_arms(
    people: People,
    query: str,
    vector: QueryVector,
    clauses: tuple[Where, Clause],
    limit: int,
    as_of: date | None,
    apart: bool,
) -> dict[str, Started[list[tuple[int, float]]]]:
    """Nearest passages among the turns of the people the question names (or describes: "the
    person who leads support", from the graph), and among those said in the time it speaks of;
    each a further ranked list for the fusion, started (``side_by_side``) for the caller to collect.
    ``clauses``: what the arms search under (with the filters), and what an event is dated under."""
    where, dating = clauses
    arms: dict[str, Started[list[tuple[int, float]]]] = {}
    if people.role_holders:
        holders = " ".join(people.role_holders)
        arms["graph"] = start(lambda: keyword_candidates(holders, where, limit), apart=apart)
    if people.speakers:
        by_speaker = Narrowing(SPEAKER_SQL, {"speakers": people.speakers})
        arms["speaker"] = start(lambda: vector_candidates(vector, where, limit, narrowing=by_speaker), apart=apart)
    # A date on one side ("before May 2025") first, then a date ("in May"), then an event dated by
    # the passages that mention it ("before the launch"): a date the question writes is surer.
    today = as_of or timezone.localdate()
    side = anchor(query, today)
    span = window(query, today) if side is None or side.event else None
    if span is not None:
        arms["time"] = start(lambda: _said_in(span, vector, where, limit), apart=apart)
    elif side is not None:
        arms["side"] = start(lambda: _said_on_side(side, vector, (where, dating), limit), apart=apart)
    return arms


def _said_on_side(
    side: Anchor, vector: QueryVector, clauses: tuple[Where, Clause], limit: int
) -> list[tuple[int, float]]:
    where, dating = clauses
    span = anchored_window(side, dating)
    return [] if span is None else _said_in(span, vector, where, limit)


def _said_in(span: Window, vector: QueryVector, where: Where, limit: int) -> list[tuple[int, float]]:
    """Nearest passages said in the window. A window the question gave no year for is moved back a
    year at a time (at most ``YEARS_BACK``) to the latest that holds a passage the caller may read:
    in an archive of 2023, "in June" is June 2023."""

    def nearest(within: Window) -> list[tuple[int, float]]:
        said_from, said_to = within.moments()
        in_span = Narrowing(SAID_BETWEEN_SQL, {"said_from": said_from, "said_to": said_to})
        return vector_candidates(vector, where, limit, narrowing=in_span)

    if rows := nearest(span):
        return rows
    if not span.yearless:
        return []
    earlier = [w for back in range(1, YEARS_BACK + 1) if (w := span.years_earlier(back)) is not None]
    found = first_said_in(where, [w.moments() for w in earlier])
    return [] if found is None else nearest(earlier[found])


# For each candidate, which of the question's words (stemmed, stop words out, as the keyword arm
# reads them) its own words or its heading hold, leaving out the words of the title and the speaker
# (weights A): every passage of a document carries them, so a passage whose text repeats the title
# (a thread's first line, a page's opening sentence) is no likelier to answer.
HELD_WORDS_SQL = (
    "SELECT c.id, c.document_id, ARRAY(SELECT q.lexeme FROM unnest(tsvector_to_array(to_tsvector('english', "
    "%(query)s))) AS q(lexeme) WHERE c.search @@ (quote_literal(q.lexeme) || ':BC')::tsquery "
    "AND NOT c.search @@ (quote_literal(q.lexeme) || ':A')::tsquery) "
    "FROM memory_chunk c WHERE c.id = ANY(%(ids)s)"
)


def _written_first(keyword: list[tuple[int, float]]) -> list[tuple[int, float]]:
    """The keyword arm's rows when its first is a written passage, else none. A turn is short and
    about one thing, so the meaning arm's rank of it stands; a written passage may mention a name
    once among many other things, or past what the embedder reads, and only its words find it
    (measured on the chats: docs/benchmarks-log.md, "A word one passage holds")."""
    if not keyword:
        return keyword
    with connections[read_alias()].cursor() as cursor:
        cursor.execute("SELECT speaker FROM memory_chunk WHERE id = %s", [keyword[0][0]])
        row = cursor.fetchone()
    return keyword if row is not None and not row[0] else []


def _best_of_each_document(order: list[int], query: str) -> tuple[list[int], dict[int, int]]:
    """One passage of each document in ``order``, the documents in the order of their best
    passage, and for each one kept, how many of its document's passages were left out.

    The passage kept is the one whose own words hold most of the question's words, the fused order
    breaking ties: the title brought the document, and every passage of it shares the title, so
    it cannot tell them apart; a short passage (a row, a date line) otherwise won on its title and
    heading alone, over the paragraph that answers. For the same reason a word every candidate of
    the document holds ("NATS" in a page about NATS) counts for nothing, and a word few of them hold
    counts more than one most of them hold (``_telling``)."""
    if not order:
        return order, {}
    with connections[read_alias()].cursor() as cursor:
        cursor.execute(HELD_WORDS_SQL, {"query": query, "ids": order})
        rows = cursor.fetchall()
    document_of = {cid: document for cid, document, _ in rows}
    held = {cid: frozenset(words) for cid, _, words in rows}
    place = {cid: index for index, cid in enumerate(order)}
    passages: dict[int, list[int]] = {}  # document -> its passages, best first
    for cid in order:
        passages.setdefault(document_of.get(cid, -cid), []).append(cid)
    kept = []
    for ids in passages.values():
        weight = _telling([held.get(cid, frozenset()) for cid in ids])
        score = {cid: sum(weight[w] for w in held.get(cid, ())) for cid in ids}
        kept.append(max(ids, key=lambda cid: (score[cid], -place[cid])))
    return kept, {cid: len(ids) - 1 for cid, ids in zip(kept, passages.values(), strict=True) if len(ids) > 1}


def _telling(held: list[frozenset[str]]) -> dict[str, float]:
    """How well each word tells one passage of a document from the others: nothing when every
    passage holds it, more the fewer do (an inverse document frequency over the passages)."""
    count = len(held)
    frequency = Counter(word for words in held for word in words)
    return {word: 0.0 if count > 1 and n == count else math.log((count + 1) / n) for word, n in frequency.items()}


def _fold_copies(hits: list[Hit], vectors: dict[int, np.ndarray]) -> list[Hit]:
    """Hits whose passage says what a better one says (the same words, or vectors at least
    ``COPY_LIKENESS`` alike: a message forwarded, a page pasted into two places) folded into it."""
    kept: list[Hit] = []
    for hit in hits:
        words = " ".join(hit.text.casefold().split())
        vector = vectors.get(hit.chunk_id)
        for better in kept:
            other = vectors.get(better.chunk_id)
            alike = (
                vector is not None
                and other is not None
                and vector.shape == other.shape
                and float(vector @ other) / float(np.linalg.norm(vector) * np.linalg.norm(other) or 1.0)
                >= COPY_LIKENESS
            )
            if alike or words == " ".join(better.text.casefold().split()):
                better.copies.append(hit.document_id)
                break
        else:
            kept.append(hit)
    return kept


def _cosine(passage: np.ndarray | None, question: QueryVector) -> float | None:
    """How near a passage is the question; None without a vector of the question's size."""
    if passage is None or passage.shape != question.values.shape:
        return None
    norm = float(np.linalg.norm(passage) * np.linalg.norm(question.values))
    return round(float(passage @ question.values) / norm, 4) if norm else None


def _parse_vector(value: Any) -> np.ndarray:
    if isinstance(value, str):  # a raw cursor returns pgvector's text form: "[0.1,0.2,...]"
        return np.array(value.strip("[]").split(","), dtype=np.float32)
    return np.asarray(value, dtype=np.float32)


def _load_rows(ids: list[int], *, with_vectors: bool) -> dict[int, tuple[Any, ...]]:
    if not ids:
        return {}
    vector = ", c.embedding" if with_vectors else ""
    with connections[read_alias()].cursor() as cursor:
        cursor.execute(
            "SELECT c.id, c.document_id, c.title, c.heading, c.text, d.source_url, d.source_kind, c.ordinal, "  # noqa: S608 (a fixed column or none)
            f"c.recorded_at, d.occurred_at, c.speaker, c.said_at{vector} FROM memory_chunk c "
            "JOIN memory_document d ON d.id = c.document_id WHERE c.id = ANY(%s)",
            [ids],
        )
        return {row[0]: row for row in cursor.fetchall()}


def _hits(
    ids: list[int],
    rows: dict[int, tuple[Any, ...]],
    fused: dict[int, float],
    ranks: dict[int, dict[str, int]],
    scores: dict[int, dict[str, float]],
) -> list[Hit]:
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
            speaker=rows[cid][10],
            said_at=rows[cid][11],
            score=round(fused[cid], 5),
            ranks=ranks.get(cid, {}),
            scores=scores.get(cid, {}),
        )
        for cid in ids
        if cid in rows
    ]
