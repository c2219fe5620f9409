"""Facts as a page shows them: one row per fact (from the tools' ``FactOut``, so names come from
what the viewer may see), grouped by relation with current ones first, and their timeline."""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import date, datetime

from brain.infra.ids import parse_numeric_id
from memory.extraction.lines import word_set
from memory.mcp_tools.shapes import EntityRef, FactOut
from memory.web.common import document_url, entity_url


@dataclass(frozen=True)
class Link:
    text: str
    url: str | None


@dataclass(frozen=True)
class FactRow:
    memory_id: str
    statement: str
    kind: str
    relation: str
    subject: Link | None
    object: Link | None
    valid_from: date | None
    valid_to: date | None
    recorded_at: datetime
    replaced: bool
    replaced_at: datetime | None
    replaced_by: str | None
    source: Link | None
    replaced_by_text: str = ""  # the replacing statement, when the same page shows it
    dated_from_upload: bool = False
    disputes: tuple[str, ...] = ()  # the open contradictions about it
    said_on: date | None = None  # when its source said it (the day the source is dated), if known
    source_document: int | None = None

    @property
    def window(self) -> str:
        """When it was true in the world, in words ("" when the source gave no dates)."""
        return self._window()

    @property
    def validity(self) -> str:
        """When it was true in the world, in words, and whether its dates were read from the day it
        was saved ("" when the source gave no dates)."""
        window = self._window()
        if self.dated_from_upload:
            return f"{window}, from the upload day: check it" if window else "from the upload day: check it"
        return window

    def _window(self) -> str:
        if self.valid_from and self.valid_to:
            return f"valid {self.valid_from:%Y-%m-%d} to {self.valid_to:%Y-%m-%d}"
        if self.valid_from:
            return f"valid from {self.valid_from:%Y-%m-%d}"
        if self.valid_to:
            return f"valid until {self.valid_to:%Y-%m-%d}"
        return ""


def _link(ref: EntityRef | None) -> Link | None:
    return Link(ref.name, entity_url(ref.entity_id)) if ref else None


def fact_row(out: FactOut) -> FactRow:
    source = Link(out.source_title, document_url(out.source_document_id)) if out.source_title else None
    return FactRow(
        memory_id=out.memory_id,
        statement=out.statement,
        kind=out.kind,
        relation=out.relation or "",
        subject=_link(out.subject),
        object=_link(out.object),
        valid_from=out.valid_from,
        valid_to=out.valid_to,
        recorded_at=out.recorded_at,
        replaced=out.superseded,
        replaced_at=out.superseded_at,
        replaced_by=out.superseded_by,
        source=source,
        dated_from_upload=out.dated_from_upload,
        source_document=parse_numeric_id(out.source_document_id, "doc") if out.source_document_id else None,
    )


def fact_rows(outs: list[FactOut]) -> list[FactRow]:
    """Rows for ``outs``; a replaced fact whose replacement is among them names it."""
    rows = [fact_row(out) for out in outs]
    statements = {row.memory_id: row.statement for row in rows}
    return [
        replace(row, replaced_by_text=statements[row.replaced_by]) if row.replaced_by in statements else row
        for row in rows
    ]


@dataclass(frozen=True)
class Group:
    relation: str
    label: str
    rows: list[FactRow]


def grouped(rows: list[FactRow]) -> list[Group]:
    """Facts by what their relation means in words ("works at", "price"); in each, current ones
    first (newest first), then replaced ones. Groups with something current come first,
    statements without a relation last."""
    groups: dict[str, list[FactRow]] = {}
    for row in rows:
        groups.setdefault(relation_words(row.relation), []).append(row)
    for members in groups.values():
        members.sort(key=lambda r: (r.replaced, -r.recorded_at.timestamp(), r.memory_id))
    order = sorted(groups, key=lambda words: (all(r.replaced for r in groups[words]), words == "", words))
    return [Group(words, words or "other statements", groups[words]) for words in order]


# Relations are stored as the verb's lemma ("host"), a verb and its preposition ("move_to"), a
# role ("ceo") or a unit ("eur_per"); a page names them as a reader would.
SAID_AS = {
    "be": "is", "have": "has", "do": "does", "go": "goes", "say": "said", "ask": "asked",
    "tell": "told", "meet": "met", "present": "presented", "work_at": "works at", "works_at": "works at",
    "member_of": "member of", "head_of": "head of", "ceo_of": "CEO of", "part_of": "part of",
    "reports_to": "reports to", "start": "starts", "begin": "starts", "end": "ends", "due": "due",
}  # fmt: skip
PRICES = frozenset({"eur", "usd", "gbp", "chf", "jpy", "price", "cost", "costs", "charge"})
SHORT_ROLES = frozenset({"ceo", "cto", "cfo", "coo", "vp", "pm", "hr"})
ROLES = word_set(
    """
    controller manager director founder cofounder owner lead head engineer designer chair
    advisor investor partner customer client vendor supplier member contact product headquarter
    holiday office team role title address location email phone date deadline budget home base
    """
)


def relation_words(relation: str) -> str:
    """A stored relation in the words people use: "works_at" -> "works at", "host" -> "hosts",
    "eur_per" -> "price", "ceo" -> "CEO"."""
    key = relation.strip().casefold()
    if not key:
        return ""
    if key in SAID_AS:
        return SAID_AS[key]
    head, *rest = key.split("_")
    if head in PRICES:
        return "price"
    if head in SHORT_ROLES:
        return " ".join([head.upper(), *rest])
    already = head.endswith("ed") or (head.endswith("s") and not head.endswith("ss"))  # "signed", "owns"
    if head in ROLES or already or head in SAID_AS.values():
        return " ".join([head, *rest])
    return " ".join([_third_person(head), *rest])


def _third_person(verb: str) -> str:
    if verb in SAID_AS:
        return SAID_AS[verb]
    if verb.endswith(("s", "sh", "ch", "x", "z", "o")):
        return verb + "es"
    if len(verb) > 2 and verb.endswith("y") and verb[-2] not in "aeiou":
        return verb[:-1] + "ies"
    return verb + "s"


@dataclass(frozen=True)
class Event:
    day: date
    what: str
    timeline: str  # "world" (when it was true) or "memory" (when Brain learned or replaced it)
    fact: FactRow


WORLD, MEMORY = "world", "memory"


def timeline(rows: list[FactRow]) -> list[Event]:
    """When each fact was valid, when its source said it, and when memory learned it and replaced
    it, in date order."""
    events: list[Event] = []
    for row in rows:
        if row.said_on and row.said_on != row.recorded_at.date():
            events.append(Event(row.said_on, "said", WORLD, row))
        if row.valid_from:
            events.append(Event(row.valid_from, "became true", WORLD, row))
        if row.valid_to:
            events.append(Event(row.valid_to, "stopped being true", WORLD, row))
        events.append(Event(row.recorded_at.date(), "memory learned it", MEMORY, row))
        if row.replaced and row.replaced_at:
            events.append(Event(row.replaced_at.date(), "memory replaced it", MEMORY, row))
    rank = {"said": 0, "became true": 1, "memory learned it": 2, "stopped being true": 3, "memory replaced it": 4}
    return sorted(events, key=lambda e: (e.day, rank[e.what], e.fact.memory_id))
