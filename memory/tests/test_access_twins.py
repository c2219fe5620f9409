"""Each rule of memory.access written in SQL selects the same rows as its ORM twin, on rows that cover
every case the rules tell apart; and every SQL form the module offers has its twin declared here."""

from __future__ import annotations

import inspect
import itertools
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Any

import pytest
from django.contrib.auth.models import Group
from django.db import connection
from django.db.models import Model, Q
from django.utils import timezone

from brain.core.actors import Actor
from brain.models import Category, Organisation
from conftest import make_actor, make_org, make_user
from memory import access
from memory.access import (
    believed_filter,
    believed_sql,
    believed_then_sql,
    current,
    current_sql,
    end_of_day,
    fact_in_use,
    fact_in_use_sql,
    for_every_member,
    outside_trash,
    outside_trash_sql,
    readable,
    readable_and_believed,
    readable_and_said,
    readable_by_all,
    readable_by_all_sql,
    readable_facts,
    readable_facts_and_believed,
    readable_sql,
    recorded_by_sql,
    said_by,
    said_by_sql,
    same_audience_as,
    same_audience_sql,
    table_alias,
)
from memory.models import EMBEDDING_DIMENSIONS, Chunk, Document, Fact

pytestmark = pytest.mark.django_db

NOW = timezone.now()
TODAY = NOW.date()
DAYS = (TODAY, TODAY - timedelta(days=2), TODAY - timedelta(days=30))
VECTOR = [1.0] + [0.0] * (EMBEDDING_DIMENSIONS - 1)
TABLES: dict[str, type[Model]] = {"memory_document": Document, "memory_chunk": Chunk, "memory_fact": Fact}
FACTS = ("memory_fact",)
PASSAGES = ("memory_chunk",)
ROWS_WITH_AN_AUDIENCE = ("memory_document", "memory_fact")
ALIASES = ("c", "f")  # the retrieval statements' alias, and another
ROW = "r"  # the alias of the row a relation between rows (same_audience_sql) starts from


def ago(days: float) -> datetime:
    return NOW - timedelta(days=days)


@dataclass(frozen=True)
class World:
    org: Organisation
    readers: tuple[Actor, ...]  # a member, a reader of the restricted category, that one narrowed, another org's


@dataclass(frozen=True)
class Reading:
    actor: Actor
    as_of: date | None = None
    history: bool = False
    row: int | None = None  # for a relation between rows: the row it starts from


@dataclass(frozen=True)
class Twin:
    """An SQL form of memory.access (``forms``: its names there) and the ORM filter it must equal."""

    forms: tuple[str, ...]
    orm: Callable[[Reading, type[Model]], Q]
    sql: Callable[[Reading, str], tuple[str, dict[str, Any]]]
    readings: Callable[[World, str], Iterable[Reading]]
    tables: tuple[str, ...] = tuple(TABLES)
    aliases: tuple[str, ...] = ALIASES
    join: str = ""  # more FROM text, with {table}, for a relation between rows


def once(world: World, table: str) -> Iterator[Reading]:
    yield Reading(world.readers[0])


def by_reader(world: World, table: str) -> Iterator[Reading]:
    yield from (Reading(reader) for reader in world.readers)


def by_day(world: World, table: str) -> Iterator[Reading]:
    yield from (Reading(world.readers[0], day) for day in DAYS)


def by_time(world: World, table: str) -> Iterator[Reading]:
    for as_of, history in itertools.product((None, *DAYS), (False, True)):
        yield Reading(world.readers[0], as_of, history)


def by_reader_and_time(world: World, table: str) -> Iterator[Reading]:
    for reader, as_of, history in itertools.product(world.readers, (None, *DAYS), (False, True)):
        yield Reading(reader, as_of, history)


def by_row(world: World, table: str) -> Iterator[Reading]:
    model = TABLES[table]
    yield from (
        Reading(world.readers[0], row=pk)
        for pk in model._default_manager.filter(org=world.org).values_list("pk", flat=True)
    )


def said_params(reading: Reading) -> dict[str, Any]:
    assert reading.as_of is not None
    return {"said_by": end_of_day(reading.as_of), "org": reading.actor.org.pk}


def by_reader_and_day(world: World, table: str) -> Iterator[Reading]:
    for reader, as_of in itertools.product(world.readers, DAYS):
        yield Reading(reader, as_of)


def as_of_param(reading: Reading) -> dict[str, Any]:
    assert reading.as_of is not None
    return {"as_of": end_of_day(reading.as_of)}


def starting_row(reading: Reading, model: type[Model]) -> Document | Fact:
    found = model._default_manager.get(pk=reading.row)
    assert isinstance(found, Document | Fact)
    return found


def in_sql(clause: access.Clause, alias: str) -> tuple[str, dict[str, Any]]:
    assert alias == "c"  # a Clause is for the retrieval statements' rows, aliased c
    return clause.sql, clause.params


# Every SQL form of memory.access beside its ORM twin: one place, walked by the tests below.
TWINS: tuple[Twin, ...] = (
    Twin(
        ("readable_sql", "readable_rule_sql"),
        lambda r, m: readable(r.actor),
        lambda r, a: readable_sql(r.actor, alias=a),
        by_reader,
    ),
    Twin(("current_sql",), lambda r, m: current(), lambda r, a: (current_sql(a), {}), once),
    Twin(
        ("believed_then_sql",),
        lambda r, m: current(r.as_of),
        lambda r, a: (believed_then_sql(a), as_of_param(r)),
        by_day,
    ),
    Twin(
        ("recorded_by_sql",),
        lambda r, m: believed_filter(r.as_of, include_superseded=True),
        lambda r, a: (recorded_by_sql(a), as_of_param(r)),
        by_day,
    ),
    Twin(
        ("believed_sql",),
        lambda r, m: believed_filter(r.as_of, r.history),
        lambda r, a: believed_sql(r.as_of, r.history, alias=a),
        by_time,
    ),
    Twin(
        ("said_by_sql",),
        lambda r, m: said_by(end_of_day(r.as_of or TODAY), r.actor.org.pk),
        lambda r, a: (said_by_sql(a), said_params(r)),
        by_day,
        PASSAGES,
    ),
    Twin(
        ("readable_and_said",),
        lambda r, m: readable(r.actor) & said_by(end_of_day(r.as_of or TODAY), r.actor.org.pk),
        lambda r, a: in_sql(readable_and_said(r.actor, end_of_day(r.as_of or TODAY)), a),
        by_reader_and_day,
        PASSAGES,
        aliases=("c",),
    ),
    Twin(("fact_in_use_sql",), lambda r, m: fact_in_use(), lambda r, a: (fact_in_use_sql(a), {}), once, FACTS),
    Twin(("readable_by_all_sql",), lambda r, m: readable_by_all(), lambda r, a: (readable_by_all_sql(a), {}), once),
    Twin(("outside_trash_sql",), lambda r, m: outside_trash(), lambda r, a: (outside_trash_sql(a), {}), once),
    Twin(
        ("readable_and_believed",),
        lambda r, m: readable(r.actor) & believed_filter(r.as_of, r.history),
        lambda r, a: in_sql(readable_and_believed(r.actor, r.as_of, r.history), a),
        by_reader_and_time,
        aliases=("c",),
    ),
    Twin(
        ("readable_facts_and_believed",),
        lambda r, m: readable_facts(r.actor) & believed_filter(r.as_of, r.history),
        lambda r, a: in_sql(readable_facts_and_believed(r.actor, r.as_of, r.history), a),
        by_reader_and_time,
        FACTS,
        aliases=("c",),
    ),
    Twin(
        ("same_audience_sql",),
        lambda r, m: same_audience_as(starting_row(r, m)),
        lambda r, a: (same_audience_sql(ROW, a), {"row": r.row}),
        by_row,
        ROWS_WITH_AN_AUDIENCE,
        join=f"JOIN {{table}} {ROW} ON {ROW}.id = %(row)s",
    ),
)


# --- the rows -----------------------------------------------------------------------------------


def build_world() -> World:
    """Rows of each table in every case the rules tell apart, and readers of each kind."""
    org, elsewhere = make_org(), make_org()
    general = Category.objects.get(org=org, slug=Category.DEFAULT_SLUG)
    finance = Category.objects.create(org=org, slug="finance", name="Finance", restricted=True)
    group = Group.objects.create(name=f"finance-{org.pk}")
    finance.groups.add(group)
    member, insider = make_actor(org), make_actor(org, make_user(org))
    insider.user.groups.add(group)
    stranger = make_actor(elsewhere)
    long_ago = ago(20)
    cases: list[dict[str, Any]] = [
        {"owner": owner, "scope": scope, "category": category, "recorded_at": long_ago}
        for owner, scope, category in itertools.product(
            (member.user, insider.user), ("shared", "personal"), (general, finance)
        )
    ]
    plain = {"owner": member.user, "scope": "shared", "category": general}
    cases += [
        {**plain, "recorded_at": long_ago, "superseded_at": ago(10)},  # superseded before the days looked at
        {**plain, "recorded_at": long_ago, "superseded_at": ago(1)},  # after two days ago, before today's end
        {**plain, "recorded_at": ago(1)},  # recorded after two days ago
        {**plain, "recorded_at": ago(40)},  # recorded before thirty days ago
        {**plain, "recorded_at": ago(40), "superseded_at": ago(25)},
        {**plain, "recorded_at": end_of_day(DAYS[1])},  # recorded at the very end of a day looked at
        {**plain, "recorded_at": long_ago, "superseded_at": end_of_day(DAYS[1])},  # superseded then
        {**plain, "recorded_at": long_ago, "trashed_at": ago(1)},  # in the trash
        {**plain, "scope": "personal", "recorded_at": long_ago, "trashed_at": ago(1)},  # its owner's, in the trash
    ]
    for number, case in enumerate(cases):
        row(org, number, **case)
    theirs = Category.objects.get(org=elsewhere, slug=Category.DEFAULT_SLUG)
    row(elsewhere, len(cases), owner=stranger.user, scope="shared", category=theirs, recorded_at=long_ago)
    first = Fact.objects.filter(org=org).order_by("pk")[0]
    fact_only = {**plain, "recorded_at": long_ago, "embedding": VECTOR}
    Fact.objects.create(org=org, statement="flagged", flagged_at=ago(1), **fact_only)
    Fact.objects.create(
        org=org, statement="flagged, then superseded", flagged_at=ago(1), superseded_at=ago(1), **fact_only
    )
    Fact.objects.create(org=org, statement="a twin", same_as=first, **fact_only)
    Fact.objects.create(org=org, statement="a personal twin", same_as=first, **{**fact_only, "scope": "personal"})
    in_trash = Fact.objects.filter(org=org, trashed_at__isnull=False).order_by("pk")[0]
    Fact.objects.create(org=org, statement="a twin of a fact in the trash", same_as=in_trash, **fact_only)
    Fact.objects.create(
        org=org, statement="a flagged twin of one in the trash", same_as=in_trash, flagged_at=ago(1), **fact_only
    )
    dated_rows(org, plain)
    return World(org=org, readers=(member, insider, for_every_member(insider), stranger))


def row(org: Organisation, number: int, **case: Any) -> None:
    """One document, its one passage, and one fact, all with the case's audience and times."""
    document = Document.objects.create(org=org, title=f"row {number}", content="text", content_hash=str(number), **case)
    Chunk.objects.create(
        org=org,
        document=document,
        ordinal=0,
        title=document.title,
        text="text",
        char_start=0,
        char_end=4,
        embedding=VECTOR,
        **case,
    )
    Fact.objects.create(org=org, statement=f"row {number}", document=document, embedding=VECTOR, **case)


def dated_rows(org: Organisation, plain: dict[str, Any]) -> None:
    """Documents and passages dated apart from when they were recorded, in versions: what
    ``said_by`` tells apart (history imported yesterday, a page replaced by a later version, by an
    earlier one, a withdrawn one)."""
    imported = {**plain, "recorded_at": ago(1)}

    def dated(number: int, occurred: datetime | None, said: datetime | None = None, **case: Any) -> Document:
        document = Document.objects.create(
            org=org, title=f"dated {number}", content="text", content_hash=f"d{number}", occurred_at=occurred, **case
        )
        chunk_case = {k: v for k, v in case.items() if k != "superseded_by"}
        Chunk.objects.create(
            org=org,
            document=document,
            ordinal=0,
            title=document.title,
            text="text",
            char_start=0,
            char_end=4,
            embedding=VECTOR,
            said_at=said,
            **chunk_case,
        )
        return document

    dated(1, ago(40), **imported)  # imported history without a time on its passage
    dated(2, ago(3), ago(3), **imported)  # a turn said three days ago
    dated(3, ago(2.5), ago(40), **imported)  # a turn whose own time is earlier than its document's
    later = dated(4, ago(5), ago(5), **imported)  # the version after one dated earlier
    dated(5, ago(35), ago(35), **{**imported, "superseded_at": ago(1), "superseded_by": later})
    earlier = dated(6, ago(50), ago(50), **imported)  # a version dated before the one it replaces
    dated(7, ago(35), ago(35), **{**imported, "superseded_at": ago(1), "superseded_by": earlier})
    dated(8, ago(35), ago(35), **{**imported, "superseded_at": ago(1)})  # withdrawn
    gone = dated(9, ago(4), ago(4), **{**imported, "superseded_at": ago(1)})  # withdrawn after replacing one
    dated(10, ago(35), ago(35), **{**imported, "superseded_at": ago(1), "superseded_by": gone})
    dated(11, None, None, **{**plain, "recorded_at": ago(3)})  # no date: when it was recorded


@pytest.fixture
def world() -> World:
    return build_world()


def ids_in_sql(twin: Twin, reading: Reading, table: str, alias: str) -> set[int]:
    where, params = twin.sql(reading, alias)
    joined = twin.join.format(table=table)
    # The table and aliases come from the fixed lists above, the WHERE text from memory.access.
    query = f"SELECT {alias}.id FROM {table} {alias} {joined} WHERE {where}"  # noqa: S608
    with connection.cursor() as cursor:
        cursor.execute(query, params)
        return {found for (found,) in cursor.fetchall()}


# --- the tests ----------------------------------------------------------------------------------


def disagreements(world: World, twin: Twin) -> list[str]:
    """Where ``twin``'s SQL form and ORM form select different rows, or the rule decides nothing."""
    found = []
    for table in twin.tables:
        model = TABLES[table]
        everything = set(model._default_manager.values_list("pk", flat=True))
        selections = []
        for reading, alias in itertools.product(list(twin.readings(world, table)), twin.aliases):
            orm = set(model._default_manager.filter(twin.orm(reading, model)).values_list("pk", flat=True))
            sql = ids_in_sql(twin, reading, table, alias)
            if orm != sql:
                where = (
                    f"{reading.actor.user.username} as of {reading.as_of} history={reading.history} row={reading.row}"
                )
                found.append(
                    f"{twin.forms[0]} on {table} {alias} ({where}): ORM only {orm - sql}, SQL only {sql - orm}"
                )
            selections.append(orm)
        # The rule decides something on these rows: it selects some, and leaves some out.
        if not any(selections) or all(selected == everything for selected in selections):
            found.append(f"{twin.forms[0]} on {table} decides nothing on these rows")
    return found


def test_each_sql_form_selects_the_same_rows_as_its_orm_twin(world):
    assert [problem for twin in TWINS for problem in disagreements(world, twin)] == []


def test_every_sql_form_of_memory_access_has_a_twin_here_and_every_accepted_text_was_compared(world):
    declared = {form for twin in TWINS for form in twin.forms}
    offered = {
        name
        for name, value in vars(access).items()
        if inspect.isfunction(value)
        and value.__module__ == access.__name__
        and (name.endswith("_sql") or inspect.signature(value).return_annotation == "Clause")
    }
    assert offered == declared, "an SQL form of memory.access without its ORM twin in TWINS (or one gone)"
    compared = {  # the texts the twins above compared, for rows aliased c
        twin.sql(reading, "c")[0]
        for twin in TWINS
        if "c" in twin.aliases
        for table in twin.tables
        for reading in twin.readings(world, table)
    }
    constants = {name: value for name, value in vars(access).items() if name.endswith("_SQL") or name == "CLAUSES"}
    for name, value in constants.items():
        texts = {value} if isinstance(value, str) else set(value)
        assert texts <= compared, f"memory.access.{name} holds SQL no twin compared with the ORM"


@pytest.mark.parametrize("alias", ["", "C", "1c", "c.id", "c; drop table x", "c --", "a" * 17, "c OR TRUE"])
def test_an_sql_form_refuses_an_alias_that_is_not_a_short_lowercase_identifier(alias):
    with pytest.raises(ValueError, match="not a table alias"):
        table_alias(alias)
    with pytest.raises(ValueError, match="not a table alias"):
        current_sql(alias)
    with pytest.raises(ValueError, match="not a table alias"):
        same_audience_sql("r", alias)
