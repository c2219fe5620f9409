"""Graph tools: facts, entities, neighbourhoods, overview, episodes, timeline and values."""

from __future__ import annotations

import dataclasses
import datetime as dt
from datetime import date, datetime
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field

from brain.core.actors import Actor
from brain.mcp.limits import Clamped
from brain.mcp.registry import ToolOutput, mcp_tool
from memory.graph import reads as graph
from memory.graph.entity_views import entity_views
from memory.mcp_tools.answers import FACT_FLAGS
from memory.mcp_tools.shapes import EntityOut, EntityRef, FactOut, FactsOut, NoArgs, fact_outs
from memory.models import Value


class SearchFactsArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    query: str = Field(min_length=1, max_length=500, description="A natural-language question (up to 500).")
    limit: Annotated[int, Clamped(1, 20)] = Field(5, description="How many facts, 1 to 20 (default 5).")
    as_of: date | None = Field(None, description="What Brain believed at the end of this day (YYYY-MM-DD).")
    include_superseded: bool = Field(False, description="Also facts later corrected or replaced (history).")


@mcp_tool("search_facts", title="Search Company Facts", args=SearchFactsArgs, output=FactsOut, idempotent=True)
def search_facts_tool(actor: Actor, args: SearchFactsArgs) -> FactsOut:
    """Search the organisation's facts (statements extracted from documents or remembered), by
    meaning and words. Each fact carries its validity window, whether it was SUPERSEDED, its score,
    and the entities at both ends with their ids, ready for explore_entity. Prefer current facts;
    pass as_of for what was believed on an earlier day. For passages of documents use
    search_company_memory; for a full answer with evidence use ask_company_memory."""
    found = graph.search_facts(
        actor=actor, query=args.query, limit=args.limit, as_of=args.as_of, include_superseded=args.include_superseded
    )
    items = fact_outs(actor, [s.fact for s in found], as_of=args.as_of, scores=[s.score for s in found])
    return FactsOut(facts=items, count=len(items))


class FindEntityArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str = Field(min_length=1, max_length=200, description="The name, whole or part (up to 200).")
    limit: Annotated[int, Clamped(1, 20)] = Field(10, description="How many matches, 1 to 20 (default 10).")


class EntitiesOut(ToolOutput):
    entities: list[EntityOut]

    def to_text(self) -> str:
        rows = [
            f"- {e.name} ({e.entity_id}, {e.type}, {e.connections} connections)"
            + (f": {e.summary}" if e.summary else "")
            for e in self.entities
        ]
        return "\n".join(rows) or "No entity matches that name."


@mcp_tool("find_entity", title="Find Company Entity", args=FindEntityArgs, output=EntitiesOut, idempotent=True)
def find_entity_tool(actor: Actor, args: FindEntityArgs) -> EntitiesOut:
    """Resolve a name to the people, teams, customers, projects or systems Brain knows: exact
    names and aliases first, then partial and similar names, case-insensitive. Returns each
    entity's id, type, aliases, connection count and summary. Use it when you know what you are
    looking for and need its id; when you have a question, use ask_company_memory or search_facts."""
    found = graph.find_entities(actor=actor, name=args.name, limit=args.limit)
    views = entity_views(actor=actor, entity_ids=found)
    counts = graph.connection_counts(actor=actor, entity_ids=found)
    return EntitiesOut(entities=[EntityOut.of(views[e], counts.get(e, 0)) for e in found if e in views])


class ExploreArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    entity: str = Field(min_length=1, max_length=200, description="An entity id (ent_...) or a name.")
    depth: Annotated[int, Clamped(1, 3)] = Field(1, description="Hops to walk, 1 to 3 (default 1).")
    limit: Annotated[int, Clamped(1, 50)] = Field(15, description="How many facts, 1 to 50 (default 15).")
    include_superseded: bool = Field(False, description="Also replaced facts: the entity's history.")
    as_of: date | None = Field(None, description="The facts believed at the end of this day (YYYY-MM-DD).")


class ExploreOut(ToolOutput):
    entity: EntityOut
    outgoing: list[FactOut]
    incoming: list[FactOut]
    further: list[FactOut] = Field(default_factory=list, description="Facts between its neighbours (depth 2 and more).")
    neighbours: list[EntityRef]
    truncated: bool
    notice: str | None = None

    def to_text(self) -> str:
        head = (
            f"{self.entity.name} ({self.entity.entity_id}, {self.entity.type}, {self.entity.connections} connections)"
        )
        parts = [head + (f": {self.entity.summary}" if self.entity.summary else "")]
        parts += [f"→ {f.line()}" for f in self.outgoing] + [f"← {f.line()}" for f in self.incoming]
        parts += [f"· {f.line()}" for f in self.further]
        if self.neighbours:
            parts.append("Neighbours: " + ", ".join(f"{n.name} ({n.entity_id})" for n in self.neighbours))
        if self.notice:
            parts.append(self.notice)
        return "\n".join(parts)


@mcp_tool("explore_entity", title="Explore Company Entity", args=ExploreArgs, output=ExploreOut, idempotent=True)
def explore_entity_tool(actor: Actor, args: ExploreArgs) -> ExploreOut:
    """Walk the graph from one entity: the facts about it (→ outgoing, ← incoming; with depth 2,
    · further facts between its neighbours) and the entities at their other ends, each with an id
    you can explore next. Prefer this to searching
    again with reworded questions. Current facts only unless include_superseded; as_of gives the
    facts believed on an earlier day. When there is more than limit, it says so and how to get more."""
    entity = graph.resolve_entity(actor=actor, ref=args.entity)
    hood = graph.explore(
        actor=actor,
        entity=entity,
        depth=args.depth,
        limit=args.limit,
        include_superseded=args.include_superseded,
        as_of=args.as_of,
    )
    connections = graph.connection_counts(actor=actor, entity_ids=[entity.pk])[entity.pk]
    notice = None
    if hood.truncated:
        notice = (
            f"Showing {args.limit} of {hood.total} facts. Call again with a larger limit (up to 50), or "
            "explore one of the neighbours."
        )
    return ExploreOut(
        entity=EntityOut.of(entity, connections),
        outgoing=fact_outs(actor, hood.outgoing, as_of=args.as_of),
        incoming=fact_outs(actor, hood.incoming, as_of=args.as_of),
        further=fact_outs(actor, hood.further, as_of=args.as_of),
        neighbours=[EntityRef.of(n) for n in hood.neighbours],
        truncated=hood.truncated,
        notice=notice,
    )


class SchemaOut(ToolOutput):
    documents: int
    facts: int
    superseded_facts: int
    entities: int
    first_recorded: datetime | None
    last_recorded: datetime | None
    by_source_kind: dict[str, int]
    entity_types: dict[str, int]
    relations: dict[str, int]
    top_entities: list[EntityOut]

    def to_text(self) -> str:
        top = ", ".join(f"{e.name} ({e.entity_id}, {e.connections})" for e in self.top_entities) or "none"
        return (
            f"{self.documents} documents, {self.facts} current facts ({self.superseded_facts} superseded), "
            f"{self.entities} entities; recorded {self.first_recorded or '-'} to {self.last_recorded or '-'}.\n"
            f"By source: {self.by_source_kind}\nEntity types: {self.entity_types}\nRelations: {self.relations}\n"
            f"Most connected: {top}"
        )


@mcp_tool("get_schema", title="Describe Company Memory", args=NoArgs, output=SchemaOut, idempotent=True)
def get_schema_tool(actor: Actor, args: NoArgs) -> SchemaOut:
    """An overview of what this memory holds for the caller: counts of documents, facts and
    entities, the recorded date range, content by source kind, entity types, relation types and
    the most-connected entities with their ids. Use it to orient yourself, when searches come back
    empty, or to answer "what does Brain know?"."""
    data = graph.overview(actor=actor)
    fields = {f.name: getattr(data, f.name) for f in dataclasses.fields(data) if f.name != "top_entities"}
    return SchemaOut(**fields, top_entities=[EntityOut.of(view, n) for view, n in data.top_entities])


class RecentArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    limit: Annotated[int, Clamped(1, 50)] = Field(15, description="How many, 1 to 50 (default 15).")


class EpisodeOut(BaseModel):
    document_id: str
    title: str
    source_kind: str
    status: str
    recorded_at: datetime
    occurred_at: datetime | None
    preview: str


class EpisodesOut(ToolOutput):
    episodes: list[EpisodeOut]

    def to_text(self) -> str:
        rows = [
            f"- {e.recorded_at:%Y-%m-%d %H:%M} [{e.source_kind}] {e.title} ({e.document_id}): {e.preview}"
            for e in self.episodes
        ]
        return "\n".join(rows) or "Nothing has been ingested yet."


@mcp_tool("recent_episodes", title="Recent Company Memory", args=RecentArgs, output=EpisodesOut, idempotent=True)
def recent_episodes_tool(actor: Actor, args: RecentArgs) -> EpisodesOut:
    """The newest source content in memory (uploads, synced records, remembered facts), newest
    first, each with a 200-character preview. Use it to catch up at the start of a session."""
    return EpisodesOut(
        episodes=[
            EpisodeOut(
                document_id=d.public_id,
                title=d.title,
                source_kind=d.source_kind,
                status=d.status,
                recorded_at=d.recorded_at,
                occurred_at=d.occurred_at,
                preview=" ".join(d.content.split())[:200],
            )
            for d in graph.recent_documents(actor=actor, limit=args.limit)
        ]
    )


class TimelineArgs(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)
    entity: str | None = Field(None, max_length=200, description="An entity name or id; omit for everything.")
    from_: date | None = Field(None, alias="from", description="Recorded or superseded on or after this day.")
    to: date | None = Field(None, description="Recorded by the end of this day.")
    limit: Annotated[int, Clamped(1, 200)] = Field(40, description="Newest entries to return, 1 to 200 (default 40).")


@mcp_tool("memory_timeline", title="Company Memory Timeline", args=TimelineArgs, output=FactsOut, idempotent=True)
def memory_timeline_tool(actor: Actor, args: TimelineArgs) -> FactsOut:
    """How knowledge changed over a window: the memories recorded or superseded in it, oldest
    first, each with when it was recorded, when and by what it was replaced, and the dates it was
    valid for. Use it for "how did X change", "what did we think before July", "what changed since
    a date". Name an entity to follow one thing. The only tool that returns superseded memories by
    default."""
    entity = graph.resolve_entity(actor=actor, ref=args.entity) if args.entity else None
    rows = graph.timeline(actor=actor, entity=entity, start=args.from_, end=args.to, limit=args.limit)
    items = fact_outs(actor, rows)
    return FactsOut(facts=items, count=len(items))


class ValuesArgs(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)
    key: str | None = Field(None, max_length=80, description="e.g. deal_value, price, headcount; omit to list keys.")
    entity_type: str | None = Field(None, max_length=40, description="customer, deal, person, project, ...")
    min: float | None = Field(None, allow_inf_nan=False, description="Only numbers at or above this.")
    max: float | None = Field(None, allow_inf_nan=False, description="Only numbers at or below this.")
    from_: date | None = Field(None, alias="from", description="Only dated values on or after this day.")
    to: date | None = Field(None, description="Only dated values on or before this day.")
    limit: Annotated[int, Clamped(1, 100)] = Field(20, description="How many, 1 to 100 (default 20).")


class ValueOut(BaseModel):
    entity: EntityRef
    key: str
    number: float | None
    date: dt.date | None
    text: str
    unit: str
    stated_on: dt.date | None
    memory_id: str
    source_title: str | None
    counted: bool = Field(True, description="In the total: the entity's latest stated current value.")
    conflicting: bool = Field(False, description="The entity has other current values of this key.")


class ConflictOut(BaseModel):
    entity: EntityRef
    values: list[ValueOut] = Field(description="The entity's current values of the key, latest stated first.")
    contradiction_ids: list[str] = Field(default_factory=list, description="Open contradictions about them.")


class ValuesOut(ToolOutput):
    keys: list[dict[str, Any]] | None = None
    values: list[ValueOut] | None = None
    total: float | None = Field(None, description="Each entity's latest stated current value counted once.")
    conflicts: list[ConflictOut] = Field(
        default_factory=list, description="Entities whose current values disagree: the total counts one of them."
    )

    def to_text(self) -> str:
        if self.keys is not None:
            return "Recorded keys: " + (", ".join(f"{k['key']} ({k['count']})" for k in self.keys) or "none")
        rows = [
            f"- {v.entity.name}: {v.key} = {_shown(v)} (stated {v.stated_on}, {v.memory_id})"
            + ("" if v.counted else "; not in the total")
            + (" [conflicting]" if v.conflicting else "")
            for v in self.values or []
        ]
        total = f"\nTotal: {self.total:g} (each entity's latest stated value, once)" if self.total is not None else ""
        for conflict in self.conflicts:
            said = " vs ".join(f"{_shown(v)} ({v.memory_id}, stated {v.stated_on})" for v in conflict.values)
            open_ = f"; open: {', '.join(conflict.contradiction_ids)}" if conflict.contradiction_ids else ""
            total += (
                f"\nValues conflict for {conflict.entity.name}: {said}{open_}. The total counts the latest "
                "stated; settle which is right before relying on it."
            )
        return ("\n".join(rows) or "No recorded values match.") + total


def _shown(value: ValueOut) -> str:
    shown = value.number if value.number is not None else value.date or value.text
    return f"{shown:g} {value.unit}".strip() if isinstance(shown, float) else f"{shown} {value.unit}".strip()


@mcp_tool("lookup_values", title="Look Up Recorded Values", args=ValuesArgs, output=ValuesOut, idempotent=True)
def lookup_values_tool(actor: Actor, args: ValuesArgs) -> ValuesOut:
    """Compare, filter or total the values recorded for entities of one kind: amounts, prices,
    dates, counts, rates ("which deals are worth more than 50k", "what renews this quarter").
    Call it without key to see which keys this organisation records. Each value is what a document
    or person stated, with the date it was stated: not a live figure, so check the owning system
    before acting on a number."""
    if not args.key:
        return ValuesOut(keys=[{"key": k, "count": n} for k, n in graph.value_keys(actor=actor)])
    rows = graph.lookup_values(
        actor=actor,
        key=args.key,
        entity_type=args.entity_type,
        minimum=args.min,
        maximum=args.max,
        start=args.from_,
        end=args.to,
        limit=args.limit,
    )
    tally = graph.tally_values(actor=actor, key=args.key, values=rows)
    views = entity_views(actor=actor, entity_ids={v.entity_id for v in rows})
    touching = open_contradictions(
        actor, {v.fact_id for vs in tally.conflicts.values() for v in vs} | {v.fact_id for v in rows}
    )
    disputed = set(tally.conflicts) | {v.entity_id for v in rows if v.fact_id in touching}

    def out(v: Value) -> ValueOut:
        return ValueOut(
            entity=EntityRef.of(views[v.entity_id]),
            key=v.key,
            number=v.number,
            date=v.date,
            text=v.text,
            unit=v.unit,
            stated_on=v.stated_on,
            memory_id=v.fact.public_id,
            source_title=v.fact.document.title if v.fact.document else None,
            counted=v.pk in tally.counted,
            conflicting=v.entity_id in disputed,
        )

    values = [out(v) for v in rows if v.entity_id in views]
    shown = {v.entity_id: v for v in rows if v.entity_id in views}
    conflicts = [
        ConflictOut(
            entity=EntityRef.of(views[entity_id]),
            values=[out(v) for v in tally.conflicts.get(entity_id, [shown[entity_id]])],
            contradiction_ids=sorted(
                {c for v in tally.conflicts.get(entity_id, [shown[entity_id]]) for c in touching.get(v.fact_id, [])}
            ),
        )
        for entity_id in sorted(disputed & set(shown))
    ]
    numbers = [v.number for v in values if v.number is not None and v.counted]
    return ValuesOut(values=values, total=sum(numbers) if numbers else None, conflicts=conflicts)


def open_contradictions(actor: Actor, fact_ids: set[int]) -> dict[int, list[str]]:
    """The open entries (contradictions) about these facts, from the apps that keep them."""
    flags: dict[int, list[str]] = {}
    for flagged in FACT_FLAGS:
        for fact_id, ids in flagged(actor, fact_ids).items():
            flags.setdefault(fact_id, []).extend(ids)
    return flags
