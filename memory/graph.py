"""Reads of the graph: facts, entities, neighbourhoods, overview, timeline and values.

Every read starts from ``visible_facts``: the caller's organisation, readable categories and
shared-or-own scope, applied in SQL. Entities are visible through a visible fact or mention.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

import numpy as np
from django.db.models import Count, Exists, Max, Min, OuterRef, Q, QuerySet

from brain.actors import Actor
from brain.errors import InvalidArgument, NotFound
from brain.ids import parse_numeric_id
from memory.access import readable
from memory.embedding import get_embedder
from memory.models import Document, Entity, Fact, Mention, Value
from memory.retrieval import access_and_time, end_of_day, fuse, keyword_candidates, vector_candidates


def visible_facts(*, actor: Actor) -> QuerySet[Fact]:
    return Fact.objects.filter(readable(actor))


def believed(facts: QuerySet[Fact], *, as_of: date | None, include_superseded: bool = False) -> QuerySet[Fact]:
    """Facts Brain believed now, or at the end of ``as_of``; all recorded ones with history."""
    if as_of is not None:
        moment = end_of_day(as_of)
        facts = facts.filter(recorded_at__lte=moment)
        if not include_superseded:
            facts = facts.filter(Q(superseded_at__isnull=True) | Q(superseded_at__gt=moment))
        return facts
    return facts if include_superseded else facts.filter(superseded_at__isnull=True)


def parse_memory_id(value: str) -> int:
    memory_id = parse_numeric_id(value, "mem", bare=True)
    if memory_id is None:
        raise InvalidArgument(f"{value!r} is not a memory id; memory ids look like mem_123.")
    return memory_id


@dataclass
class ScoredFact:
    fact: Fact
    score: float
    ranks: dict[str, int]


def search_facts(
    *, actor: Actor, query: str, limit: int = 5, as_of: date | None = None, include_superseded: bool = False,
    vector: np.ndarray | None = None,
) -> list[ScoredFact]:  # fmt: skip
    """Hybrid search over facts with the passage search's retrievers (HNSW neighbours, BM25),
    fused by reciprocal rank. Access and time are part of the SQL."""
    where, params = access_and_time(actor, as_of, include_superseded)
    candidates = max(40, limit * 4)
    vector = get_embedder().embed([query])[0] if vector is None else vector
    fused, ranks = fuse(
        {
            "vector": vector_candidates(vector, where, params, candidates, table="memory_fact"),
            "keyword": keyword_candidates(query, where, params, candidates, table="memory_fact"),
        }
    )
    top = sorted(fused, key=lambda fid: -fused[fid])[:limit]
    facts = Fact.objects.filter(pk__in=top).select_related("subject", "object", "document").in_bulk()
    best = max(fused.values(), default=1.0)
    return [ScoredFact(facts[fid], round(fused[fid] / best, 3), ranks[fid]) for fid in top if fid in facts]


def visible_entities(*, actor: Actor) -> QuerySet[Entity]:
    facts = visible_facts(actor=actor)
    documents = Document.objects.filter(readable(actor))
    # Three EXISTS rather than one with OR: each can use its own index.
    return Entity.objects.filter(org=actor.org).filter(
        Exists(facts.filter(subject=OuterRef("pk")))
        | Exists(facts.filter(object=OuterRef("pk")))
        | Exists(Mention.objects.filter(entity=OuterRef("pk"), document__in=documents))
    )


def connection_counts(*, actor: Actor, entity_ids: list[int]) -> dict[int, int]:
    current = visible_facts(actor=actor).filter(superseded_at__isnull=True)
    counts: dict[int, int] = dict.fromkeys(entity_ids, 0)
    for field in ("subject", "object"):
        rows = current.filter(**{f"{field}__in": entity_ids}).values(field).annotate(n=Count("pk"))
        for row in rows:
            counts[row[field]] += row["n"]
    return counts


def find_entities(*, actor: Actor, name: str, limit: int = 10) -> list[Entity]:
    """Exact name or alias first, then names containing it, then names that look alike."""
    name = name.strip()
    entities = visible_entities(actor=actor)
    exact = list(entities.filter(Q(name__iexact=name) | Q(aliases__icontains=name)).order_by("name")[:limit])
    exact = [e for e in exact if e.name.lower() == name.lower() or name.lower() in (a.lower() for a in e.aliases)]
    seen = {e.pk for e in exact}
    partial = [e for e in entities.filter(name__icontains=name).order_by("name")[: limit * 2] if e.pk not in seen]
    seen |= {e.pk for e in partial}
    similar = [e for e in entities.filter(name__trigram_similar=name)[: limit * 2] if e.pk not in seen]
    return (exact + partial + similar)[:limit]


def resolve_entity(*, actor: Actor, ref: str) -> Entity:
    entity_id = parse_numeric_id(ref, "ent")
    if entity_id is not None:
        entity = visible_entities(actor=actor).filter(pk=entity_id).first()
        if entity is None:
            raise NotFound(f"No entity {ref} that you can see.")
        return entity
    found = find_entities(actor=actor, name=ref, limit=1)
    if not found:
        raise NotFound(f"No entity named like {ref!r}. Try find_entity with part of the name.")
    return found[0]


@dataclass
class Neighbourhood:
    entity: Entity
    outgoing: list[Fact]
    incoming: list[Fact]
    neighbours: list[Entity]
    total: int
    truncated: bool


def explore(
    *, actor: Actor, entity: Entity, depth: int = 1, limit: int = 15, include_superseded: bool = False,
    as_of: date | None = None,
) -> Neighbourhood:  # fmt: skip
    facts = believed(visible_facts(actor=actor), as_of=as_of, include_superseded=include_superseded)
    frontier, seen = {entity.pk}, {entity.pk}
    collected: list[int] = []
    for _ in range(depth):
        layer = facts.filter(Q(subject_id__in=frontier) | Q(object_id__in=frontier)).exclude(pk__in=collected)
        rows = list(layer.select_related("subject", "object", "document").order_by("-recorded_at")[: limit * 3])
        collected += [f.pk for f in rows]
        frontier = {e for f in rows for e in (f.subject_id, f.object_id) if e and e not in seen}
        seen |= frontier
    total = len(collected)
    chosen = Fact.objects.filter(pk__in=collected).select_related("subject", "object", "document")
    chosen_list = sorted(chosen, key=lambda f: (f.superseded_at is not None, -f.recorded_at.timestamp()))[:limit]
    neighbours = Entity.objects.filter(pk__in=(seen - {entity.pk}))
    return Neighbourhood(
        entity=entity,
        outgoing=[f for f in chosen_list if f.subject_id == entity.pk],
        incoming=[f for f in chosen_list if f.subject_id != entity.pk],
        neighbours=list(neighbours.order_by("name")[:limit]),
        total=total,
        truncated=total > limit,
    )


def overview(*, actor: Actor) -> dict[str, Any]:
    documents = Document.objects.filter(readable(actor))
    facts = visible_facts(actor=actor).filter(superseded_at__isnull=True)
    entities = visible_entities(actor=actor)
    span = documents.aggregate(first=Min("recorded_at"), last=Max("recorded_at"))
    top_ids = list(facts.exclude(subject__isnull=True).values("subject").annotate(n=Count("pk")).order_by("-n")[:10])
    names = Entity.objects.in_bulk([row["subject"] for row in top_ids])
    return {
        "documents": documents.count(),
        "facts": facts.count(),
        "superseded_facts": visible_facts(actor=actor).filter(superseded_at__isnull=False).count(),
        "entities": entities.count(),
        "first_recorded": span["first"],
        "last_recorded": span["last"],
        "by_source_kind": dict(documents.values_list("source_kind").annotate(n=Count("pk")).order_by("-n")),
        "top_entities": [(names[row["subject"]], row["n"]) for row in top_ids if row["subject"] in names],
        "relations": dict(
            facts.exclude(relation="").values_list("relation").annotate(n=Count("pk")).order_by("-n")[:30]
        ),
        "entity_types": dict(entities.values_list("type").annotate(n=Count("pk")).order_by("-n")),
    }


def recent_documents(*, actor: Actor, limit: int = 15) -> list[Document]:
    return list(Document.objects.filter(readable(actor)).order_by("-recorded_at", "-pk")[:limit])


def timeline(
    *, actor: Actor, entity: Entity | None = None, start: date | None = None, end: date | None = None, limit: int = 40
) -> list[Fact]:
    """Memories recorded or superseded in the window, oldest first (the newest ``limit`` of them)."""
    facts = visible_facts(actor=actor)
    if entity is not None:
        facts = facts.filter(Q(subject=entity) | Q(object=entity))
    recorded, superseded = Q(), Q(superseded_at__isnull=False)
    if start is not None:
        recorded &= Q(recorded_at__date__gte=start)
        superseded &= Q(superseded_at__date__gte=start)
    if end is not None:
        recorded &= Q(recorded_at__lte=end_of_day(end))
        superseded &= Q(superseded_at__lte=end_of_day(end))
    rows = facts.filter(recorded | superseded if start or end else Q()).select_related(
        "subject", "object", "superseded_by", "document"
    )
    newest = list(rows.order_by("-recorded_at", "-pk")[:limit])
    return sorted(newest, key=lambda f: (f.recorded_at, f.pk))


def value_keys(*, actor: Actor) -> list[tuple[str, int]]:
    values = Value.objects.filter(fact__in=visible_facts(actor=actor).filter(superseded_at__isnull=True))
    return list(values.values_list("key").annotate(n=Count("pk")).order_by("-n", "key"))


def lookup_values(
    *, actor: Actor, key: str, entity_type: str | None = None, minimum: float | None = None,
    maximum: float | None = None, start: date | None = None, end: date | None = None, limit: int = 20,
    as_of: date | None = None,
) -> list[Value]:  # fmt: skip
    facts = believed(visible_facts(actor=actor), as_of=as_of)
    values = Value.objects.filter(fact__in=facts, key=key).select_related("entity", "fact", "fact__document")
    if entity_type:
        values = values.filter(entity__type=entity_type)
    if minimum is not None:
        values = values.filter(number__gte=minimum)
    if maximum is not None:
        values = values.filter(number__lte=maximum)
    if start is not None:
        values = values.filter(Q(date__gte=start) | Q(date__isnull=True, stated_on__gte=start))
    if end is not None:
        values = values.filter(Q(date__lte=end) | Q(date__isnull=True, stated_on__lte=end))
    return list(values.order_by("-number", "date", "entity__name")[:limit])


def as_datetime(value: datetime | None) -> str | None:
    return value.isoformat() if value else None
