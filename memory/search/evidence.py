"""The evidence for a question: the best pages' excerpts, the facts behind them, the statements
that conflict with them and warnings, all under the caller's access and as of a day.

The selector behind ``ask_company_memory``; it returns typed evidence and the tool formats it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, datetime, timedelta

from django.db.models import Q, QuerySet
from django.utils import timezone

from brain.core.actors import Actor
from memory.access import LEARNED, SAID, facts_said_by, facts_stated_by
from memory.graph import reads as graph
from memory.graph.entity_views import entities_named
from memory.graph.supersession import about_the_same_thing
from memory.index.serving import QueryVector, query_vector
from memory.index.side_by_side import may_run_apart, start
from memory.models import Chunk, Document, Fact
from memory.search.answer import Card, answer_card
from memory.search.filters import day_end
from memory.search.passages import Hit, View, search_chunks, search_views
from memory.search.relevance import ON_TOPIC_SIMILARITY

# The searches by meaning: the plain vector arm and the ones narrowed to a speaker or a time.
BY_MEANING = frozenset({"vector", "speaker", "time", "side"})


@dataclass(frozen=True)
class Question:
    text: str
    retrieval_mode: str = "auto"  # auto, vector or graph
    top_k: int = 5
    max_evidence_documents: int = 3
    max_chars_per_document: int = 4000
    max_claims: int = 8
    as_of: date | None = None
    as_of_by: str = LEARNED  # how as_of reads (memory.access, "What the sources had said by a moment")
    high_risk: bool = False


@dataclass(frozen=True)
class Excerpt:
    document: Document
    text: str
    truncated: bool
    chunk_ids: list[str]


@dataclass
class Evidence:
    excerpts: list[Excerpt]
    claims: list[Fact]
    hits: list[Hit] = field(default_factory=list)
    named: list[int] = field(default_factory=list)  # entity ids the question names
    graph_facts: int = 0
    conflicts: list[Fact] | None = None  # only for high-risk questions
    warnings: list[str] | None = None
    vector: QueryVector | None = None  # the question embedded, for the searches that follow
    card_hits: list[Hit] | None = None  # what the answer card reads, when it came with the passages

    @property
    def empty(self) -> bool:
        return not self.excerpts and not self.claims


def gather_evidence(*, actor: Actor, question: Question) -> Evidence:
    """Passages, named entities' facts and fact matches for a question, the question embedded once.

    A question that is not ``on_topic`` has no evidence: what the searches found for it is only
    what is least unrelated."""
    vector = query_vector(actor.org, question.text)
    said = question.as_of is not None and question.as_of_by == SAID
    # The fact search needs only the question and its vector: it runs on a search thread while the
    # passages are searched here (``side_by_side``; in turn inside a transaction).
    facts = start(
        lambda: graph.search_facts(
            actor=actor,
            query=question.text,
            limit=question.max_claims,
            as_of=None if said else question.as_of,
            vector=vector,
        ),
        apart=may_run_apart(),
    )
    hits, card_hits = _passages(actor, question, vector)
    named = entities_named(actor=actor, text=question.text, limit=5) if question.retrieval_mode != "vector" else []
    matched = facts.result()
    if said:
        then = set(
            _believed_facts(actor, question).filter(pk__in=[s.fact.pk for s in matched]).values_list("pk", flat=True)
        )
        matched = [s for s in matched if s.fact.pk in then]
    if not on_topic(hits, matched, named=bool(named), model=vector.model):
        return Evidence([], [], hits=hits, vector=vector)
    graph_facts = _entity_facts(actor, named, question) if named else []
    excerpts = _excerpts(hits, graph_facts, question)
    claims = _claims(actor, question, hits, graph_facts, [s.fact for s in matched])
    evidence = Evidence(
        excerpts, claims, hits=hits, named=named, graph_facts=len(graph_facts), vector=vector, card_hits=card_hits
    )
    if question.high_risk and not evidence.empty:
        evidence.conflicts = _conflicts(actor, claims, question)
        evidence.warnings = _warnings(hits, excerpts, claims, evidence.conflicts)
    return evidence


# The search an answer card reads: the search page's, so the page and ask_company_memory build
# the same card (``memory.search.answer``).
CARD_SEARCH_TOP_K = 20
# The passages the answer card reads: one per document, best first, cut at the relevance floor.
CARD_VIEW = View(top_k=CARD_SEARCH_TOP_K, per_document=True, floor=True)


def card_search(
    *, actor: Actor, question: str, as_of: date | None, vector: QueryVector | None = None, as_of_by: str = LEARNED
) -> list[Hit]:
    """The passages the answer card reads (``CARD_VIEW``)."""
    found = search_views(actor=actor, query=question, views=[CARD_VIEW], as_of=as_of, as_of_by=as_of_by, vector=vector)
    return found[0].hits


def card_for(
    *,
    actor: Actor,
    question: str,
    as_of: date | None,
    vector: QueryVector | None = None,
    as_of_by: str = LEARNED,
    hits: list[Hit] | None = None,
) -> Card:
    """The answer card for ``question`` (``memory.search.answer``) from ``card_search``, or from
    ``hits`` when the caller read them with its own passages (``gather_evidence``)."""
    if hits is None:
        hits = card_search(actor=actor, question=question, as_of=as_of, vector=vector, as_of_by=as_of_by)
    return answer_card(question, hits, [said_when(h) for h in hits])


def said_when(hit: Hit) -> datetime:
    """When a passage was said: its turn's moment, else its document's date, else when it was recorded."""
    return hit.said_at or hit.occurred_at or hit.recorded_at


def on_topic(hits: list[Hit], facts: list[graph.ScoredFact], *, named: bool, model: str) -> bool:
    """Whether what was found for a question is about it: the question names an entity the graph
    knows or a person heard in the conversations (the speaker arm ran), or the closest passage or
    fact is at least ``ON_TOPIC_SIMILARITY`` near it for the question's model."""
    if named or any("speaker" in hit.ranks for hit in hits):
        return True
    return closeness(hits, facts) >= ON_TOPIC_SIMILARITY.get(model, 0.0)


def closeness(hits: list[Hit], facts: list[graph.ScoredFact]) -> float:
    """How near the question the closest passage or fact found for it is: the best cosine
    similarity any of the searches by meaning gave (a keyword match alone counts for nothing)."""
    passages = (score for hit in hits for arm, score in hit.scores.items() if arm in BY_MEANING)
    return max([*passages, *(fact.similarity for fact in facts)], default=0.0)


def _passages(actor: Actor, question: Question, vector: QueryVector) -> tuple[list[Hit], list[Hit] | None]:
    """The question's passages and, in auto mode, the answer card's from the same retrieval (each
    as its own search would give it; the arms run once)."""
    if question.retrieval_mode == "graph":
        return [], None
    if question.retrieval_mode == "vector":
        found = search_chunks(
            actor=actor,
            query=question.text,
            top_k=question.top_k,
            mode="vector",
            as_of=question.as_of,
            as_of_by=question.as_of_by,
            vector=vector,
        )
        return found.hits, None
    passages, card = search_views(
        actor=actor,
        query=question.text,
        views=[View(top_k=question.top_k), CARD_VIEW],
        as_of=question.as_of,
        as_of_by=question.as_of_by,
        vector=vector,
    )
    return passages.hits, card.hits


def _believed_facts(actor: Actor, question: Question) -> QuerySet[Fact]:
    """The facts the caller may see as of the question's day, read as ``question.as_of_by`` says."""
    facts = graph.visible_facts(actor=actor)
    if question.as_of is not None and question.as_of_by == SAID:
        return facts.filter(facts_said_by(day_end(question.as_of, actor.org)))
    return graph.believed(facts, as_of=question.as_of)


def _entity_facts(actor: Actor, ids: list[int], question: Question) -> list[Fact]:
    """The newest facts about the named entities, as subject or object. Each entity's newest of
    each side are read in the order of an index (``fact_subject_newest``, ``fact_object_newest``)
    and stopped early, then the newest of those are loaded whole: one statement for all of them
    sorted every fact of the entity, whole rows with their vectors (65 ms for an entity with 15,000
    facts; docs/benchmarks-log.md, "ask_company_memory's own statements")."""
    facts = _believed_facts(actor, question)
    limit = question.max_claims * 3
    newest = [
        facts.filter(**{side: entity}).order_by("-recorded_at", "-pk").values_list("pk", "recorded_at")[:limit]
        for entity in ids
        for side in ("subject_id", "object_id")
    ]
    if not newest:
        return []
    found = newest[0].union(*newest[1:]) if len(newest) > 1 else newest[0]
    picked = sorted(set(found), key=lambda row: (row[1], row[0]), reverse=True)[:limit]
    rows = facts.filter(pk__in=[pk for pk, _ in picked]).select_related("subject", "object", "document")
    return list(rows.order_by("-recorded_at", "-pk"))


def _excerpts(hits: list[Hit], graph_facts: list[Fact], question: Question) -> list[Excerpt]:
    order: list[int] = []
    matched: dict[int, list[int]] = {}
    for hit in hits:
        if hit.document_id not in matched:
            order.append(hit.document_id)
        matched.setdefault(hit.document_id, []).append(hit.ordinal)
    for fact in graph_facts:
        if fact.document_id and fact.document_id not in matched:
            order.append(fact.document_id)
            matched[fact.document_id] = []
    chosen = order[: question.max_evidence_documents]
    documents = Document.objects.in_bulk(chosen)
    return [_excerpt(documents[d], matched[d], question.max_chars_per_document) for d in chosen if d in documents]


def _excerpt(document: Document, ordinals: list[int], budget: int) -> Excerpt:
    """The matched passages in reading order, widened to their neighbours while the budget lasts."""
    chunks = {c.ordinal: c for c in Chunk.objects.filter(document=document).only("pk", "ordinal", "text")}
    wanted = list(dict.fromkeys(o for o in ordinals if o in chunks)) or sorted(chunks)[:1]
    picked, used = set(wanted), sum(len(chunks[o].text) for o in wanted)
    for step in (1, -1, 2, -2):
        for o in list(wanted):
            neighbour = chunks.get(o + step)
            if neighbour and neighbour.ordinal not in picked and used + len(neighbour.text) <= budget:
                picked.add(neighbour.ordinal)
                used += len(neighbour.text)
    parts, last = [], None
    for o in sorted(picked):
        parts.append(("" if last is None or o == last + 1 else "…\n") + chunks[o].text)
        last = o
    text = "\n".join(parts) or document.content
    return Excerpt(document, text[:budget], len(text) > budget, [chunks[o].public_id for o in sorted(picked)])


def _claims(
    actor: Actor, question: Question, hits: list[Hit], graph_facts: list[Fact], matched: list[Fact]
) -> list[Fact]:
    """Facts from the matched passages first, then the best fact matches, then the named entities' facts."""
    believed = _believed_facts(actor, question)
    from_passages = list(
        believed.filter(chunk_id__in=[h.chunk_id for h in hits]).select_related("subject", "object", "document")
    )
    rank = {h.chunk_id: i for i, h in enumerate(hits)}
    from_passages.sort(key=lambda f: (rank.get(f.chunk_id or 0, 99), f.pk))  # one order, whatever the plan
    picked: dict[int, Fact] = {}
    for fact in [*from_passages[: question.max_claims // 2 + 1], *matched, *graph_facts, *from_passages]:
        picked.setdefault(fact.pk, fact)
    return list(picked.values())[: question.max_claims]


def _conflicts(actor: Actor, claims: list[Fact], question: Question) -> list[Fact]:
    """Other statements about the same single-valued thing: replaced ones and rivals, among what
    had been said (or, as ``question.as_of_by`` says, recorded) by the question's day."""
    query = Q()
    for fact in claims:
        same = about_the_same_thing(fact)  # the query supersession finds its rivals with
        if same is not None:
            query |= same
    if not query:
        return []
    facts = graph.visible_facts(actor=actor)
    if question.as_of is not None and question.as_of_by == SAID:
        facts = facts.filter(facts_stated_by(day_end(question.as_of, actor.org)))
    else:
        facts = graph.believed(facts, as_of=question.as_of, include_superseded=True)
    rivals = facts.filter(query).exclude(pk__in=[c.pk for c in claims]).select_related("subject", "object", "document")
    return list(rivals.order_by("-recorded_at", "-pk")[:10])


def _warnings(hits: list[Hit], excerpts: list[Excerpt], claims: list[Fact], conflicts: list[Fact]) -> list[str]:
    warnings = []
    if len({e.document.pk for e in excerpts}) <= 1:
        warnings.append("All the evidence comes from a single source; confirm before relying on it.")
    if hits and max(h.scores.get("vector", 0.0) for h in hits) < 0.35:
        warnings.append("The closest passages are only loosely related to the question; the answer may not be here.")
    old = timezone.now() - timedelta(days=365)
    if excerpts and all(e.document.recorded_at < old for e in excerpts):
        warnings.append("All the evidence is more than a year old; it may be out of date.")
    if conflicts:
        warnings.append("Some statements about the same thing disagree or were replaced; say which one you use.")
    if any(c.superseded_at for c in claims):
        warnings.append("Some facts shown were superseded later; prefer the current ones.")
    return warnings
