"""Output shapes shared by the memory tools and prompts."""

from __future__ import annotations

from datetime import date, datetime

from pydantic import BaseModel, ConfigDict, Field

from brain.core.actors import Actor
from brain.core.reviews import stale_since, today
from brain.infra.ids import format_id
from brain.mcp.registry import ToolOutput
from memory.access import superseded_by_then
from memory.documents.source import UPLOAD_DATED, UPLOAD_DATED_HELP
from memory.graph.entity_views import EntityView, entity_views
from memory.graph.twins import sources_of_twins
from memory.models import Fact

# What a stale mark means, for the tools' schemas and their text (brain.core.reviews).
STALE_HELP = (
    "Set when {what} is past its review date: the day its review fell due, and nobody has said since "
    "that it is still correct. Tell the user the source may be out of date. Empty when it is not stale."
)


def stale_words(since: date) -> str:
    return f"stale: its review was due on {since:%Y-%m-%d}"


def _lines(items: list[FactOut], empty: str) -> str:
    return "\n".join(f"{i}. {f.line()}" for i, f in enumerate(items, 1)) or empty


class FactsOut(ToolOutput):
    facts: list[FactOut]
    count: int

    def to_text(self) -> str:
        return _lines(self.facts, "No facts match. Say Brain has nothing on this rather than guessing.")


class EntityOut(BaseModel):
    entity_id: str
    name: str
    type: str
    aliases: list[str]
    connections: int
    summary: str

    @classmethod
    def of(cls, view: EntityView, connections: int) -> EntityOut:
        return cls(
            entity_id=view.public_id,
            name=view.name,
            type=view.type,
            aliases=view.aliases,
            connections=connections,
            summary=view.summary,
        )


class NoArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")


class EntityRef(BaseModel):
    entity_id: str
    name: str

    @classmethod
    def of(cls, view: EntityView) -> EntityRef:
        return cls(entity_id=view.public_id, name=view.name)


class SourceRef(BaseModel):
    document_id: str
    title: str


class FactOut(BaseModel):
    memory_id: str
    statement: str
    kind: str
    subject: EntityRef | None = None
    object: EntityRef | None = None
    relation: str | None = None
    valid_from: date | None = None
    valid_to: date | None = None
    recorded_at: datetime
    superseded: bool
    superseded_at: datetime | None = None
    superseded_by: str | None = None
    source_document_id: str | None = None
    source_title: str | None = None
    score: float | None = None
    dated_from_upload: bool = Field(
        default=False,
        description=UPLOAD_DATED_HELP,
    )
    also_in: list[SourceRef] = Field(
        default_factory=list, description="Other documents that say the same thing (one fact, several sources)."
    )
    stale_since: date | None = Field(None, description=STALE_HELP.format(what="the document this fact comes from"))

    @classmethod
    def of(
        cls, fact: Fact, views: dict[int, EntityView], *, score: float | None = None, as_of: date | None = None
    ) -> FactOut:
        """The fact as seen at the end of ``as_of`` (now without it); entities named by ``views``."""

        def ref(entity_id: int | None) -> EntityRef | None:
            return EntityRef.of(views[entity_id]) if entity_id in views else None

        replaced = superseded_by_then(fact.superseded_at, as_of)
        return cls(
            memory_id=fact.public_id,
            statement=fact.statement,
            kind=fact.kind,
            subject=ref(fact.subject_id),
            object=ref(fact.object_id),
            relation=fact.relation or None,
            valid_from=fact.valid_from,
            valid_to=fact.valid_to,
            recorded_at=fact.recorded_at,
            superseded=replaced,
            superseded_at=fact.superseded_at if replaced else None,
            superseded_by=format_id("mem", fact.superseded_by_id) if replaced and fact.superseded_by_id else None,
            source_document_id=format_id("doc", fact.document_id) if fact.document_id else None,
            source_title=fact.document.title if fact.document_id and fact.document else None,
            score=score,
            dated_from_upload=fact.dated_from_upload,
        )

    def line(self) -> str:
        window = ""
        if self.valid_from or self.valid_to:
            window = f" (valid {self.valid_from or '…'} → {self.valid_to or 'now'})"
        mark = " SUPERSEDED" if self.superseded else ""
        if self.dated_from_upload:
            window += f" (dated from the upload day: {UPLOAD_DATED})"
        ends = [f"{e.name} ({e.entity_id})" for e in (self.subject, self.object) if e]
        entities = f"\n   Entities: {' → '.join(ends)}" if ends else ""
        source = f"\n   Source: {self.source_title} [{self.source_document_id}]" if self.source_title else ""
        if self.stale_since:
            source += f" ({stale_words(self.stale_since)})"
        if self.also_in:
            source += "\n   Also said in: " + "; ".join(f"{d.title} [{d.document_id}]" for d in self.also_in)
        return f"[{self.memory_id}]{mark} {self.statement}{window}{entities}{source}"


def fact_outs(
    actor: Actor, facts: list[Fact], *, as_of: date | None = None, scores: list[float] | None = None
) -> list[FactOut]:
    """Facts for output, their entities named as the caller's sources name them."""
    views = entity_views(actor=actor, entity_ids={e for f in facts for e in (f.subject_id, f.object_id) if e})
    outs = [FactOut.of(f, views, score=scores[i] if scores else None, as_of=as_of) for i, f in enumerate(facts)]
    also = sources_of_twins(actor=actor, fact_ids=[f.pk for f in facts])
    on = today(actor.org)
    for fact, out in zip(facts, outs, strict=True):
        out.also_in = [SourceRef(document_id=format_id("doc", pk), title=title) for pk, title in also.get(fact.pk, [])]
        source = fact.document if fact.document_id else None
        if source is not None and source.superseded_at is None:
            out.stale_since = stale_since(source.review_due_on, on=on)
    return outs
