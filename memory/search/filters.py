"""What a search may be narrowed to, inside its SQL: a kind of source, who said it, a category and
a range of days, and the two readings of "as of".

``SearchFilters`` is typed: the category is a name resolved here against the categories the
caller may read (``category_named``), the days are dates turned into moments in the organisation's
time zone (``day_start``, ``day_end``). ``filtered`` turns them into the ``Filtered`` clause every
arm of ``memory.search.passages.search_chunks`` runs under (``memory.index.candidates``: fixed
texts, values only as parameters), so a filtered search ranks among the rows that pass, instead of
cutting what an unfiltered search found. ``filter_choices`` counts, among the passages a search
found, the documents of each kind, speaker and category, for a page to offer as choices.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, time

from django.db import connections

from brain.core.actors import Actor
from brain.core.errors import InvalidArgument
from brain.faces.times import zone_of
from brain.infra.replicas import read_alias
from brain.models import Category, Organisation
from memory.access import LEARNED, SAID, Clause, readable_and_said, readable_category_ids, readable_sql
from memory.index.candidates import (
    FROM_SOURCE_SQL,
    IN_CATEGORY_SQL,
    SAID_BY_WHOM_SQL,
    SAID_FROM_SQL,
    SAID_UNTIL_SQL,
    Filtered,
    access_and_time,
)


@dataclass(frozen=True)
class SearchFilters:
    """What a search is narrowed to; each one optional. ``category`` is a category's id (from
    ``category_named``); the days are the organisation's days, both included."""

    source_kind: str | None = None
    speaker: str | None = None
    category: int | None = None
    said_after: date | None = None
    said_before: date | None = None

    def __post_init__(self) -> None:
        if self.said_after and self.said_before and self.said_after > self.said_before:
            raise InvalidArgument(
                f"The first day ({self.said_after}) is after the last ({self.said_before}); swap them or leave one out."
            )

    def __bool__(self) -> bool:
        return any(value not in (None, "") for value in vars(self).values())


def day_start(day: date, org: Organisation) -> datetime:
    """The first moment of ``day`` in the organisation's time zone."""
    return datetime.combine(day, time.min, tzinfo=zone_of(org))


def day_end(day: date, org: Organisation) -> datetime:
    """The last moment of ``day`` in the organisation's time zone."""
    return datetime.combine(day, time.max, tzinfo=zone_of(org))


def filtered(where: Clause, filters: SearchFilters | None, org: Organisation) -> Clause | Filtered:
    """``where`` with the filters after it (``where`` itself without any)."""
    if not filters:
        return where
    chosen: list[str] = []
    values: dict[str, object] = {}
    if filters.source_kind:
        chosen.append(FROM_SOURCE_SQL)
        values["filter_kind"] = filters.source_kind
    if filters.speaker:
        chosen.append(SAID_BY_WHOM_SQL)
        values["filter_speaker"] = filters.speaker
    if filters.category is not None:
        chosen.append(IN_CATEGORY_SQL)
        values["filter_category"] = filters.category
    if filters.said_after:
        chosen.append(SAID_FROM_SQL)
        values["filter_from"] = day_start(filters.said_after, org)
    if filters.said_before:
        chosen.append(SAID_UNTIL_SQL)
        values["filter_until"] = day_end(filters.said_before, org)
    return Filtered(where, tuple(chosen), values)


def as_of_clause(actor: Actor, as_of: date | None, as_of_by: str) -> Clause:
    """Who may see a passage and which passages count as of ``as_of`` (``memory.access``, "What
    the sources had said by a moment"): with ``said``, what the sources had said by the end of that
    day in the organisation's zone; with ``learned``, what Brain had recorded by the end of it."""
    if as_of_by not in (SAID, LEARNED):
        raise InvalidArgument(f"as_of_by is {SAID!r} or {LEARNED!r}; got {as_of_by!r}.")
    if as_of is None or as_of_by == LEARNED:
        return access_and_time(actor, as_of)
    return readable_and_said(actor, day_end(as_of, actor.org))


def category_named(*, actor: Actor, name: str) -> int:
    """The id of the category called ``name`` (any case) among those the actor may read; refused,
    naming those, when there is none: a category the caller may not read is not confirmed to exist."""
    readable = Category.objects.filter(pk__in=readable_category_ids(actor=actor)).order_by("name")
    found = [c for c in readable.only("pk", "name") if c.name.casefold() == name.strip().casefold()]
    if not found:
        names = ", ".join(c.name for c in readable) or "none"
        raise InvalidArgument(f"No category called {name!r} that you can see; the categories are: {names}.")
    return found[0].pk


@dataclass(frozen=True)
class Choice:
    value: str
    documents: int  # how many of the documents found it holds


@dataclass(frozen=True)
class Choices:
    kinds: list[Choice]
    speakers: list[Choice]
    categories: list[Choice]


# One statement over the passages a search found: the documents of each kind, speaker and category.
_CHOICES_SQL = (
    "SELECT 'kind', d.source_kind, count(DISTINCT c.document_id) FROM memory_chunk c "  # noqa: S608 (a memory.access clause)
    "JOIN memory_document d ON d.id = c.document_id WHERE c.id = ANY(%(ids)s) AND {where} GROUP BY d.source_kind "
    "UNION ALL SELECT 'speaker', c.speaker, count(DISTINCT c.document_id) FROM memory_chunk c "
    "WHERE c.id = ANY(%(ids)s) AND c.speaker <> '' AND {where} GROUP BY c.speaker "
    "UNION ALL SELECT 'category', g.name, count(DISTINCT c.document_id) FROM memory_chunk c "
    "JOIN {categories} g ON g.id = c.category_id WHERE c.id = ANY(%(ids)s) AND {where} GROUP BY g.name"
)


def filter_choices(*, actor: Actor, chunk_ids: list[int]) -> Choices:
    """Among the passages ``chunk_ids`` (a search's candidates, ``SearchResult.found``), how many
    documents of each kind of source, speaker and category, most first; only passages the actor
    may read are counted."""
    counted: dict[str, list[Choice]] = {"kind": [], "speaker": [], "category": []}
    if chunk_ids:
        access, params = readable_sql(actor)
        with connections[read_alias()].cursor() as cursor:
            statement = _CHOICES_SQL.format(where=access, categories=Category._meta.db_table)
            cursor.execute(statement, {**params, "ids": chunk_ids})
            for field, value, count in cursor.fetchall():
                counted[field].append(Choice(value, int(count)))
    for choices in counted.values():
        choices.sort(key=lambda c: (-c.documents, c.value))
    return Choices(counted["kind"], counted["speaker"], counted["category"])
