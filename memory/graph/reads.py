"""Reads of the graph: facts, entities, neighbourhoods, overview, timeline and values.

Every read starts from ``visible_facts``: the caller's organisation, readable categories and
shared-or-own scope, flagged facts held back (``memory.access``), applied in SQL. Entities are
visible through a visible mention.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from datetime import date, datetime

from django.db.models import (
    BooleanField,
    Case,
    Count,
    Exists,
    IntegerField,
    Max,
    Min,
    OuterRef,
    Q,
    QuerySet,
    Subquery,
    When,
)
from django.db.models.functions import Lower

from brain.core.actors import Actor
from brain.core.errors import InvalidArgument, NotFound
from brain.infra.ids import parse_numeric_id
from memory.access import (
    believed_filter,
    current,
    end_of_day,
    facts_said_by,
    facts_stated_by,
    readable,
    readable_facts,
    readable_facts_and_believed,
)
from memory.graph.entities import shown_type
from memory.graph.entity_views import EntityView, entities_of_type, entity_views, visible_mentions
from memory.graph.supersession import stated_value
from memory.index.candidates import keyword_candidates, vector_candidates, with_counters
from memory.index.fusion import fuse
from memory.index.serving import QueryVector, query_vector
from memory.models import Document, Entity, Fact, Mention, Value


def visible_facts(*, actor: Actor) -> QuerySet[Fact]:
    return Fact.objects.filter(readable_facts(actor))


def believed(facts: QuerySet[Fact], *, as_of: date | None, include_superseded: bool = False) -> QuerySet[Fact]:
    """Facts Brain believed now, or at the end of ``as_of``; all recorded ones with history."""
    return facts.filter(believed_filter(as_of, include_superseded))


def said_by_then(*, actor: Actor, ids: list[int], moment: datetime) -> dict[int, bool]:
    """Of the facts ``ids``, those a source had stated by ``moment``, each with whether it still
    stood then (not yet replaced by a statement said by then): ``memory.access``'s rule, in one
    statement."""
    standing = Case(When(facts_said_by(moment), then=True), default=False, output_field=BooleanField())
    rows = visible_facts(actor=actor).filter(facts_stated_by(moment), pk__in=ids).annotate(standing=standing)
    return dict(rows.values_list("pk", "standing"))


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
    similarity: float = 0.0  # cosine similarity to the question; 0 when only the keyword arm found it


def search_facts(
    *,
    actor: Actor,
    query: str,
    limit: int = 5,
    as_of: date | None = None,
    include_superseded: bool = False,
    vector: QueryVector | None = None,
) -> list[ScoredFact]:
    """Hybrid search over facts with the passage search's retrievers (HNSW neighbours, BM25),
    fused by reciprocal rank. Access and time are part of the SQL."""
    where = with_counters(readable_facts_and_believed(actor, as_of, include_superseded))
    candidates = max(40, limit * 4)
    vector = query_vector(actor.org, query) if vector is None else vector
    nearest = vector_candidates(vector, where, candidates, table="memory_fact")
    keyword = keyword_candidates(query, where, candidates, table="memory_fact")
    fused, ranks = fuse({"vector": nearest, "keyword": keyword})
    top = sorted(fused, key=lambda fid: -fused[fid])[:limit]
    facts = Fact.objects.filter(pk__in=top).select_related("subject", "object", "document").in_bulk()
    best, similarity = max(fused.values(), default=1.0), dict(nearest)
    return [
        ScoredFact(facts[fid], round(fused[fid] / best, 3), ranks[fid], round(similarity.get(fid, 0.0), 4))
        for fid in top
        if fid in facts
    ]


def visible_entities(*, actor: Actor) -> QuerySet[Entity]:
    """Entities a readable source names (every fact's entities are named in its own document)."""
    mentioned = visible_mentions(actor=actor).filter(entity=OuterRef("pk"))
    return Entity.objects.filter(org=actor.org).filter(Exists(mentioned))


class _CountOf(Subquery):
    """How many rows a queryset has, as a scalar subquery (one per entity in a listing)."""

    template = "(SELECT count(*) FROM (%(subquery)s) AS counted)"
    output_field = IntegerField()

    def __init__(self, queryset: QuerySet[Fact]) -> None:
        super().__init__(queryset.order_by().values("pk"))


def list_entity_directory(*, actor: Actor, name: str = "", type: str = "") -> QuerySet[Entity]:
    """The entities the caller may see, most connected first (``connections``: their current facts
    the caller may read, as subject or object), narrowed to a type as the caller's sources give it
    and to names a readable source gives that contain ``name``."""
    rows = entities_of_type(actor=actor, type=type) if type else visible_entities(actor=actor)
    if name.strip():
        named = visible_mentions(actor=actor).filter(entity=OuterRef("pk"), surface__icontains=name.strip())
        rows = rows.filter(Exists(named))
    facts = visible_facts(actor=actor).filter(current())
    touching = facts.filter(Q(subject_id=OuterRef("pk")) | Q(object_id=OuterRef("pk")))
    return rows.annotate(connections=_CountOf(touching)).order_by("-connections", "pk")


def connection_counts(*, actor: Actor, entity_ids: list[int]) -> dict[int, int]:
    now = visible_facts(actor=actor).filter(current())
    counts: dict[int, int] = dict.fromkeys(entity_ids, 0)
    for field in ("subject", "object"):
        rows = now.filter(**{f"{field}__in": entity_ids}).values(field).annotate(n=Count("pk"))
        for row in rows:
            counts[row[field]] += row["n"]
    return counts


def find_entities(*, actor: Actor, name: str, limit: int = 10) -> list[int]:
    """Entity ids for a name: exact names first, then names containing it, then names that look
    alike; matched against the names readable sources give, never an entity's hidden names."""
    name = name.strip()
    mentions = visible_mentions(actor=actor).filter(entity__org=actor.org)
    found: list[int] = []

    def add(rows: QuerySet[Mention], cap: int) -> None:
        for entity_id in rows.values_list("entity_id", flat=True).distinct()[:cap]:
            if entity_id not in found:
                found.append(entity_id)

    add(mentions.annotate(lowered=Lower("surface")).filter(lowered=name.casefold()).order_by("entity_id"), limit)
    add(mentions.filter(surface__icontains=name).order_by("entity_id"), limit * 2)
    add(mentions.filter(surface__trigram_similar=name).order_by("entity_id"), limit * 2)
    return found[:limit]


def resolve_entity(*, actor: Actor, ref: str) -> EntityView:
    entity_id = parse_numeric_id(ref, "ent")
    if entity_id is not None:
        view = entity_views(actor=actor, entity_ids=[entity_id]).get(entity_id)
        if view is None:
            raise NotFound(f"No entity {ref} that you can see.")
        return view
    found = find_entities(actor=actor, name=ref, limit=1)
    if not found:
        raise NotFound(f"No entity named like {ref!r}. Try find_entity with part of the name.")
    return entity_views(actor=actor, entity_ids=found)[found[0]]


@dataclass
class Neighbourhood:
    entity: EntityView
    outgoing: list[Fact]  # the entity is the subject
    incoming: list[Fact]  # the entity is the object
    further: list[Fact]  # between other entities, reached at depth 2 and more
    neighbours: list[EntityView]
    total: int
    truncated: bool


def explore(
    *,
    actor: Actor,
    entity: EntityView,
    depth: int = 1,
    limit: int = 15,
    include_superseded: bool = False,
    as_of: date | None = None,
) -> Neighbourhood:
    """The facts within ``depth`` hops of the entity, the newest current ones first. ``total``
    counts every fact in reach (each hop walks from the entities the previous hop reached)."""
    facts = believed(visible_facts(actor=actor), as_of=as_of, include_superseded=include_superseded)
    frontier, seen = {entity.pk}, {entity.pk}
    reached = Q(pk__in=[])
    for _ in range(depth):
        layer = Q(subject_id__in=frontier) | Q(object_id__in=frontier)
        reached |= layer
        ends = facts.filter(layer).values_list("subject_id", "object_id")
        frontier = {e for pair in ends for e in pair if e and e not in seen}
        seen |= frontier
        if not frontier:
            break
    in_reach = facts.filter(reached)
    total = in_reach.count()
    replaced = Case(When(superseded_at__isnull=True, then=0), default=1, output_field=IntegerField())
    rows = in_reach.select_related("subject", "object", "document").order_by(replaced, "-recorded_at", "-pk")[:limit]
    chosen = list(rows)
    views = entity_views(actor=actor, entity_ids=seen - {entity.pk})
    return Neighbourhood(
        entity=entity,
        outgoing=[f for f in chosen if f.subject_id == entity.pk],
        incoming=[f for f in chosen if f.subject_id != entity.pk and f.object_id == entity.pk],
        further=[f for f in chosen if entity.pk not in (f.subject_id, f.object_id)],
        neighbours=sorted(views.values(), key=lambda v: v.name.casefold())[:limit],
        total=total,
        truncated=total > limit,
    )


@dataclass(frozen=True)
class Overview:
    """What the memory holds for one caller: counts, the recorded span and the main shapes."""

    documents: int
    facts: int
    superseded_facts: int
    entities: int
    first_recorded: datetime | None
    last_recorded: datetime | None
    by_source_kind: dict[str, int]
    top_entities: list[tuple[EntityView, int]]  # the most connected, with their current facts
    relations: dict[str, int]
    entity_types: dict[str, int]


def overview(*, actor: Actor) -> Overview:
    documents = Document.objects.filter(readable(actor))
    facts = visible_facts(actor=actor).filter(current())
    entities = visible_entities(actor=actor)
    span = documents.aggregate(first=Min("recorded_at"), last=Max("recorded_at"))
    top_ids = list(
        facts.exclude(subject__isnull=True).values("subject").annotate(n=Count("pk")).order_by("-n", "subject")[:10]
    )
    views = entity_views(actor=actor, entity_ids=[row["subject"] for row in top_ids])
    return Overview(
        documents=documents.count(),
        facts=facts.count(),
        superseded_facts=visible_facts(actor=actor).filter(superseded_at__isnull=False).count(),
        entities=entities.count(),
        first_recorded=span["first"],
        last_recorded=span["last"],
        by_source_kind=dict(documents.values_list("source_kind").annotate(n=Count("pk")).order_by("-n", "source_kind")),
        top_entities=[(views[row["subject"]], row["n"]) for row in top_ids if row["subject"] in views],
        relations=dict(
            facts.exclude(relation="").values_list("relation").annotate(n=Count("pk")).order_by("-n", "relation")[:30]
        ),
        entity_types=entity_type_counts(actor=actor),
    )


def entity_type_counts(*, actor: Actor) -> dict[str, int]:
    """How many visible entities of each type, each typed as the caller's sources type it (or as an
    admin typed it)."""
    columns = ("entity_id", "type", "entity__type", "entity__type_fixed")
    rows = visible_mentions(actor=actor).values_list(*columns).annotate(n=Count("pk"))
    tallies: dict[int, Counter[str]] = {}
    fixed: dict[int, str] = {}
    for entity_id, type_, chosen, is_fixed, n in rows:
        tally = tallies.setdefault(entity_id, Counter())
        if type_ and type_ != "other":
            tally[type_] += n
        if is_fixed:
            fixed[entity_id] = chosen
    counts = Counter(shown_type(t, fixed.get(e)) for e, t in tallies.items())
    return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))


def recent_documents(*, actor: Actor, limit: int = 15) -> list[Document]:
    return list(Document.objects.filter(readable(actor)).order_by("-recorded_at", "-pk")[:limit])


def timeline(
    *,
    actor: Actor,
    entity: EntityView | None = None,
    start: date | None = None,
    end: date | None = None,
    limit: int = 40,
) -> list[Fact]:
    """Memories recorded or superseded in the window, oldest first (the newest ``limit`` of them)."""
    facts = visible_facts(actor=actor)
    if entity is not None:
        facts = facts.filter(Q(subject_id=entity.pk) | Q(object_id=entity.pk))
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
    values = Value.objects.filter(fact__in=visible_facts(actor=actor).filter(current()))
    return list(values.values_list("key").annotate(n=Count("pk")).order_by("-n", "key"))


def lookup_values(
    *,
    actor: Actor,
    key: str,
    entity_type: str | None = None,
    minimum: float | None = None,
    maximum: float | None = None,
    start: date | None = None,
    end: date | None = None,
    limit: int = 20,
    as_of: date | None = None,
) -> list[Value]:
    facts = believed(visible_facts(actor=actor), as_of=as_of)
    values = Value.objects.filter(fact__in=facts, key=key).select_related("entity", "fact", "fact__document")
    if entity_type:
        values = values.filter(entity__in=entities_of_type(actor=actor, type=entity_type))
    if minimum is not None:
        values = values.filter(number__gte=minimum)
    if maximum is not None:
        values = values.filter(number__lte=maximum)
    if start is not None:
        values = values.filter(Q(date__gte=start) | Q(date__isnull=True, stated_on__gte=start))
    if end is not None:
        values = values.filter(Q(date__lte=end) | Q(date__isnull=True, stated_on__lte=end))
    return list(values.order_by("-number", "date", "pk")[:limit])


@dataclass(frozen=True)
class Tally:
    """A total that counts each entity once: its latest stated current value of the key, however many
    documents state one (two amounts of one customer are never added). ``conflicts`` are the entities
    whose current values of the key say different things (the same amount, date or words stated twice
    is no conflict), each with all of them, latest stated first."""

    total: float | None
    counted: frozenset[int]  # the values (pks) in the total
    conflicts: dict[int, list[Value]]


def _latest(value: Value) -> tuple[object, ...]:
    return (value.stated_on or date.min, value.fact.recorded_at, value.pk)


def tally_values(*, actor: Actor, key: str, values: list[Value], as_of: date | None = None) -> Tally:
    """Total ``values`` (from ``lookup_values``) with one current value per entity, and say which
    entities' current values of ``key`` disagree, also among values the filters left out."""
    facts = believed(visible_facts(actor=actor), as_of=as_of)
    known = Value.objects.filter(fact__in=facts, key=key, entity_id__in={v.entity_id for v in values})
    by_entity: dict[int, list[Value]] = {}
    for value in known.select_related("fact", "fact__document"):
        by_entity.setdefault(value.entity_id, []).append(value)
    conflicts = {}
    for entity_id, stated in by_entity.items():
        if len({stated_value(v.number, v.date, v.text, v.unit) for v in stated}) > 1:
            conflicts[entity_id] = sorted(stated, key=_latest, reverse=True)
    counted: dict[int, Value] = {}
    for value in values:
        if value.entity_id not in counted or _latest(value) > _latest(counted[value.entity_id]):
            counted[value.entity_id] = value
    numbers = [v.number for v in counted.values() if v.number is not None]
    return Tally(sum(numbers) if numbers else None, frozenset(v.pk for v in counted.values()), conflicts)


def as_datetime(value: datetime | None) -> str | None:
    return value.isoformat() if value else None
