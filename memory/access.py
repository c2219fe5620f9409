"""The rules every read of the memory runs under, each written once in both its forms.

- Who may see a row (documents, chunks, facts): the caller's organisation, a category open to
  all members or to one of the caller's groups, and shared scope or the caller's own. An actor
  narrowed by ``for_every_member`` (work whose result every member reads, such as a shared job's
  run) sees only what every member may: open categories and shared scope, nothing of its own. A
  connector saving into a restricted category its source controls (a private Slack channel's)
  also reaches that category, for that save only (``Actor.source_categories``, set by
  ``connectors.sync``); nobody reads anything more through it. An organisation admin reads by
  the same rule as any member: restricted categories only through their groups.
- What was believed as of day D: recorded by the end of D and not superseded by then; without
  a day, what is believed now (not superseded).
- What the sources had said by a moment, the other reading of "as of" (``said_by``, see
  ``AS_OF_BY`` below): dated by then, in the version read then.
- Which facts are in use: a fact an admin flagged as broken is shown to nobody, in any view or
  history, until an admin reviews it (``memory.graph.fixes``).
- What is in the trash: a deleted document or forgotten memory, with its passages and facts, is
  read by nobody, in any view or history, until it is restored (``memory.documents.trash``). The
  rule is part of who may see a row (``readable``, ``readable_by_all``, ``seen_by_every_reader_of``)
  and of which facts are in use (``fact_in_use``), so every read that applies one of them leaves the
  trash out; a fact shown in place of its twins (``memory.graph.twins``) that goes to the trash
  hands the showing back to its twins, and they come back hidden when it is restored.

Each rule has an ORM form (``readable``, ``current``, ``believed_filter``, ``fact_in_use``,
``readable_by_all``, ``outside_trash``, ...) and, where raw SQL needs it, an SQL form beside it built from the same
values (``readable_sql``, ``current_sql``, ``believed_sql``, ``fact_in_use_sql``,
``readable_by_all_sql``, ``outside_trash_sql``, ...): fixed text for rows of a table alias the code chooses, whose every
value is a parameter. ``memory.tests.test_access_twins`` checks that each SQL form selects the same
rows as its ORM twin. The retrieval statements take their WHERE text only as a ``Clause``, which
accepts nothing but the texts this module builds, so no caller's value reaches SQL text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from datetime import UTC, date, datetime
from datetime import time as dtime
from typing import TYPE_CHECKING, Any

from django.db.models import Exists, OuterRef, Q

from brain.core.actors import Actor, worked_out_once
from brain.models import Category
from memory.models import Document

if TYPE_CHECKING:
    from memory.models import Fact

SHARED, PERSONAL = "shared", "personal"
EVERY_MEMBER = "every member"
NOBODY = 0  # the owner id of a narrowed actor's reads: no row is anybody's own


def for_every_member(actor: Actor) -> Actor:
    """``actor`` narrowed to what every member of its organisation may read: shared rows of
    categories open to all members; nothing restricted and nothing personal, its own included.
    It still acts (and writes) as its user; only what it reads is narrowed."""
    return replace(actor, reads_for=EVERY_MEMBER)


def reads_for_every_member(actor: Actor) -> bool:
    return actor.reads_for == EVERY_MEMBER


def readable_category_ids(*, actor: Actor) -> list[int]:
    narrowed = reads_for_every_member(actor)

    def compute() -> list[int]:
        rows = Category.objects.filter(org=actor.org)
        if narrowed:
            rows = rows.filter(restricted=False)
        else:
            groups = actor.user.groups.values_list("pk", flat=True)
            rows = rows.filter(Q(restricted=False) | Q(groups__in=groups) | Q(pk__in=actor.source_categories))
        return list(rows.values_list("pk", flat=True).distinct())

    key = ("readable_categories", actor.org.pk, actor.user.pk, narrowed, tuple(sorted(actor.source_categories)))
    return list(worked_out_once(key, compute))


def _reader_id(actor: Actor) -> int:
    """Whose personal rows the actor reads: its user's, or nobody's when narrowed."""
    return NOBODY if reads_for_every_member(actor) else actor.user.pk


def outside_trash() -> Q:
    """Rows (Document, Chunk, Fact) not in the trash: the only rows anybody reads."""
    return Q(trashed_at__isnull=True)


def entry_outside_trash() -> Q:
    """Register entries not taken from a document in the trash (those a person recorded have none).
    A subquery rather than a join, so that a list of entries may be locked (``select_for_update``)."""
    return ~Q(Exists(Document.objects.filter(pk=OuterRef("document_id"), trashed_at__isnull=False)))


def _audience(actor: Actor, categories: list[int] | None) -> Q:
    cats = readable_category_ids(actor=actor) if categories is None else categories
    return Q(org=actor.org) & Q(category_id__in=cats) & (Q(scope=SHARED) | Q(owner_id=_reader_id(actor)))


def readable(actor: Actor, categories: list[int] | None = None) -> Q:
    """Rows (Document, Chunk, Fact) the actor may see: their audience, and not in the trash."""
    return _audience(actor, categories) & outside_trash()


def readable_in_trash(actor: Actor) -> Q:
    """Documents in the trash that the actor could read were they not there: what the trash shows
    (and lets restore) to whoever put them there and to admins (``memory.documents.trash``)."""
    return _audience(actor, None) & Q(trashed_at__isnull=False)


def readable_entries(actor: Actor) -> Q:
    """Register entries (rows with a category, scope and owner, and the document they were taken
    from, if any) the actor may see: the audience of ``readable``, and not from the trash."""
    return _audience(actor, None) & entry_outside_trash()


def fact_not_flagged() -> Q:
    """Facts not held back for review by a flag."""
    return Q(flagged_at__isnull=True)


def fact_in_use() -> Q:
    """Facts not in the trash, not held back for review by a flag, nor shown through the first
    document that said them (``memory.graph.twins``) while that one is out of the trash, for reads
    that apply the audience otherwise."""
    shown_alone = Q(same_as__isnull=True) | Q(same_as__trashed_at__isnull=False)
    return outside_trash() & fact_not_flagged() & shown_alone


def readable_facts(actor: Actor) -> Q:
    """Facts the actor may see: readable, not held back for review by a flag, and not a twin."""
    return readable(actor) & fact_in_use()


# The rules in SQL. Each is fixed text for rows of any table alias the code chooses (``table_alias``),
# whose every value is a %(name)s parameter; the constants are the forms for rows aliased ``c``, of
# which the retrieval statements' clauses are made.
_ALIAS = re.compile(r"[a-z][a-z0-9_]{0,15}")
_CATEGORY_TABLE = Category._meta.db_table


def table_alias(alias: str) -> str:
    """``alias`` as it may stand in SQL text: a short lowercase identifier, never a caller's value."""
    if not _ALIAS.fullmatch(alias):
        raise ValueError(f"not a table alias: {alias!r}")
    return alias


def outside_trash_sql(alias: str = "c") -> str:
    """``outside_trash`` for rows aliased ``alias``."""
    return f"{table_alias(alias)}.trashed_at IS NULL"


def readable_rule_sql(alias: str = "c") -> str:
    """``readable`` for rows aliased ``alias``, with the parameters ``readable_sql`` gives."""
    t = table_alias(alias)
    return (
        f"{t}.org_id = %(org)s AND {t}.category_id = ANY(%(cats)s) "
        f"AND ({t}.scope = '{SHARED}' OR {t}.owner_id = %(user)s) AND {outside_trash_sql(t)}"
    )


def current_sql(alias: str = "c") -> str:
    """``current()`` for rows aliased ``alias``: believed now (not superseded)."""
    return f"{table_alias(alias)}.superseded_at IS NULL"


def recorded_by_sql(alias: str = "c") -> str:
    """Rows recorded by the moment ``%(as_of)s`` (``believed_filter`` with history)."""
    return f"{table_alias(alias)}.recorded_at <= %(as_of)s"


def believed_then_sql(alias: str = "c") -> str:
    """``current(as_of)`` for rows aliased ``alias``: recorded by ``%(as_of)s`` and not superseded by then."""
    t = table_alias(alias)
    return f"{recorded_by_sql(t)} AND ({t}.superseded_at IS NULL OR {t}.superseded_at > %(as_of)s)"


_FACT_TABLE = "memory_fact"


def fact_in_use_sql(alias: str = "c") -> str:
    """``fact_in_use`` for facts aliased ``alias``: not in the trash, not flagged, not a twin of
    a fact out of the trash."""
    t = table_alias(alias)
    # Unqualified names in the subquery are the first fact's (the one the twin is shown through).
    first_in_trash = f"SELECT 1 FROM {_FACT_TABLE} WHERE id = {t}.same_as_id AND trashed_at IS NOT NULL"  # noqa: S608 (an alias and a model's table)
    shown_alone = f"({t}.same_as_id IS NULL OR EXISTS ({first_in_trash}))"
    return f"{outside_trash_sql(t)} AND {t}.flagged_at IS NULL AND {shown_alone}"


def readable_by_all_sql(alias: str = "c") -> str:
    """``readable_by_all`` for rows aliased ``alias``: shared, in a category that is not restricted."""
    t = table_alias(alias)
    # Unqualified names in the subquery are the category's own, whatever the outer alias.
    return (
        f"{t}.scope = '{SHARED}' AND {t}.category_id IN "  # noqa: S608 (an alias and a model's table)
        f"(SELECT id FROM {_CATEGORY_TABLE} WHERE NOT restricted) AND {outside_trash_sql(t)}"
    )


def said_by_sql(alias: str = "c") -> str:
    """``said_by`` for passages aliased ``alias``: what the sources of the organisation ``%(org)s``
    had said by ``%(said_by)s``."""
    t = table_alias(alias)
    # A passage without a time of its own (said_at is its turn's time or its document's date) is
    # dated by its document; the replaced versions whose successor was dated later are one
    # statement, read once (a hashed subplan), not per row.
    return (
        f"{t}.org_id = %(org)s AND ({t}.said_at <= %(said_by)s OR ({t}.said_at IS NULL AND {t}.document_id IN "  # noqa: S608 (an alias and fixed text)
        "(SELECT id FROM memory_document WHERE org_id = %(org)s "
        "AND coalesce(occurred_at, recorded_at) <= %(said_by)s))) "
        f"AND ({t}.superseded_at IS NULL OR {t}.document_id IN (SELECT d.id FROM memory_document d "
        "JOIN memory_document n ON n.id = d.superseded_by_id WHERE d.org_id = %(org)s "
        "AND coalesce(n.occurred_at, n.recorded_at) > %(said_by)s "
        "AND (n.superseded_at IS NULL OR n.superseded_by_id IS NOT NULL)))"
    )


READABLE_SQL = readable_rule_sql("c")
SAID_BY_SQL = said_by_sql("c")
EVERY_RECORDED_SQL = "TRUE"
BELIEVED_NOW_SQL = current_sql("c")
RECORDED_BY_SQL = recorded_by_sql("c")
BELIEVED_THEN_SQL = believed_then_sql("c")
TIME_RULES_SQL = (EVERY_RECORDED_SQL, BELIEVED_NOW_SQL, RECORDED_BY_SQL, BELIEVED_THEN_SQL)
FACT_IN_USE_SQL = fact_in_use_sql("c")
# Every WHERE text a retrieval statement may carry: who may see a row, alone or with a time rule,
# and for facts with the rule that flagged ones are held back.
CLAUSES = frozenset(
    {
        READABLE_SQL,
        *(f"{READABLE_SQL} AND {rule}" for rule in TIME_RULES_SQL),
        *(f"{READABLE_SQL} AND {rule} AND {FACT_IN_USE_SQL}" for rule in TIME_RULES_SQL),
        f"{READABLE_SQL} AND {SAID_BY_SQL}",  # passages only: what the sources said by then
    }
)


@dataclass(frozen=True)
class Clause:
    """A WHERE clause of a retrieval statement (rows aliased ``c``) and its parameters.

    Its text must be one of ``CLAUSES``, which this module builds from constants; values travel
    only in ``params``. Any other text is refused, so nothing a caller passes becomes SQL.
    """

    sql: str
    params: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.sql not in CLAUSES:
            raise ValueError("not a clause built by memory.access")


def readable_sql(actor: Actor, categories: list[int] | None = None, *, alias: str = "c") -> tuple[str, dict[str, Any]]:
    """The same rule as ``readable``, for rows aliased ``alias`` (``c``: ``READABLE_SQL``) in raw SQL."""
    cats = readable_category_ids(actor=actor) if categories is None else categories
    return readable_rule_sql(alias), {"org": actor.org.pk, "cats": cats, "user": _reader_id(actor)}


def end_of_day(day: date) -> datetime:
    return datetime.combine(day, dtime.max, tzinfo=UTC)


def believed_filter(as_of: date | None, include_superseded: bool = False) -> Q:
    """Rows believed at the end of ``as_of`` (now without it); every recorded one with history."""
    if as_of is None:
        return Q() if include_superseded else Q(superseded_at__isnull=True)
    moment = end_of_day(as_of)
    known = Q(recorded_at__lte=moment)
    if include_superseded:
        return known
    return known & (Q(superseded_at__isnull=True) | Q(superseded_at__gt=moment))


def current(as_of: date | None = None) -> Q:
    """Rows current now, or as they stood at the end of ``as_of``: recorded by then and not yet
    superseded. Every read of what is current uses this (``believed_filter`` with history)."""
    return believed_filter(as_of)


def believed_sql(
    as_of: date | None, include_superseded: bool = False, *, alias: str = "c"
) -> tuple[str, dict[str, Any]]:
    """The same rule as ``believed_filter``, for rows aliased ``alias`` (``c``: one of
    ``TIME_RULES_SQL``) in raw SQL (``TRUE`` when nothing is filtered)."""
    if as_of is None:
        return (EVERY_RECORDED_SQL, {}) if include_superseded else (current_sql(alias), {})
    rule = recorded_by_sql(alias) if include_superseded else believed_then_sql(alias)
    return rule, {"as_of": end_of_day(as_of)}


def readable_and_believed(actor: Actor, as_of: date | None, include_superseded: bool = False) -> Clause:
    """Both rules as one clause: what the actor may see and what was believed as of ``as_of``."""
    access, params = readable_sql(actor)
    time_rule, time_params = believed_sql(as_of, include_superseded)
    return Clause(f"{access} AND {time_rule}", {**params, **time_params})


def readable_facts_and_believed(actor: Actor, as_of: date | None, include_superseded: bool = False) -> Clause:
    """``readable_and_believed`` for facts (rows of memory_fact aliased ``c``), flagged ones held
    back: the same rows as ``readable_facts`` with ``believed_filter``."""
    clause = readable_and_believed(actor, as_of, include_superseded)
    return Clause(f"{clause.sql} AND {FACT_IN_USE_SQL}", clause.params)


def superseded_by_then(superseded_at: datetime | None, as_of: date | None) -> bool:
    """Whether a row shows as superseded in a view of ``as_of`` (now without it)."""
    if superseded_at is None:
        return False
    return as_of is None or superseded_at <= end_of_day(as_of)


def readable_by_all() -> Q:
    """Rows every member of their organisation may read: shared, in a category that is not
    restricted, and not in the trash (what work whose result everyone reads may draw on: the
    nightly scans)."""
    return Q(scope=SHARED, category__restricted=False) & outside_trash()


def in_the_trail(text: str, *, scope: str, restricted: bool) -> str:
    """What of a document's title or a memory's words an audit record may keep. The trail is read by
    the organisation's admins, who never read a member's personal rows nor a restricted category
    without its group (``readable``): for those the record says what was acted on, not its words."""
    if scope == PERSONAL:
        return "(withheld: personal)"
    if restricted:
        return "(withheld: a restricted category)"
    return text[:200]


def audience_key(scope: str, owner_id: int | None, category_id: int | None) -> tuple[object, ...]:
    """Who reads a row, as a value: two rows are read by the same people exactly when their keys are
    equal. A shared row's owner (its writer) does not change who reads it; a personal row is its
    owner's alone."""
    return (category_id, scope, owner_id if scope == PERSONAL else None)


def same_audience(scope: str, owner_id: int | None, category_id: int | None = None) -> Q:
    """Rows read by the same people as a row of this scope, owner and category (``audience_key`` as
    a filter). ``category_id`` None leaves the category to the caller."""
    rule = Q(scope=scope)
    if category_id is not None:
        rule &= Q(category_id=category_id)
    if scope == PERSONAL:
        rule &= Q(owner_id=owner_id)
    return rule


def same_audience_as(row: Document | Fact) -> Q:
    """Rows read by the same people as ``row``."""
    return same_audience(row.scope, row.owner_id, row.category_id)


def same_audience_sql(row: str, other: str) -> str:
    """``same_audience_as`` in SQL: the rows aliased ``other`` read by the same people as ``row``."""
    row, other = table_alias(row), table_alias(other)
    return (
        f"{other}.category_id = {row}.category_id AND {other}.scope = {row}.scope "
        f"AND ({other}.scope = '{SHARED}' OR {other}.owner_id = {row}.owner_id)"
    )


def seen_by_every_reader_of(document: Document) -> Q:
    """Documents that everyone who may read ``document`` may read too.

    Open categories are readable by every member; the document's own category by each of its
    readers; shared scope by all, and a personal document's owner reads their own personal ones.
    What is derived for a document from other documents (which entity a name is) stays within them.
    """
    audience = Q(scope=SHARED)
    if document.scope == PERSONAL:
        audience |= Q(scope=PERSONAL, owner_id=document.owner_id)
    categories = Q(category__restricted=False) | Q(category_id=document.category_id)
    return Q(org_id=document.org_id) & categories & audience & outside_trash()


# --- what the sources had said by a moment ------------------------------------------------------
#
# "As of day D" reads one of two ways (``AS_OF_BY``). "learned" is what Brain knew at the end of D
# (``believed_filter``: recorded by then, not superseded by then). "said" is what the sources had
# said by the end of D, as Brain knows them now, so that history imported later answers as of its
# own dates: a passage counts when
#   1. its own date is on or before the moment: when it was said (``Chunk.said_at``, a turn's time
#      or its document's ``occurred_at``), else its document's ``occurred_at``, else when it was
#      recorded; and
#   2. its document's version is the one believed now, or was replaced by a version dated after
#      the moment (a page edited later still reads as it stood then), a version that was itself
#      not withdrawn. A withdrawn document (superseded by nothing) is not read at all.
# The caller chooses the moment: the end of D in the organisation's time zone (``memory.search``).
SAID, LEARNED = "said", "learned"
AS_OF_BY = (SAID, LEARNED)


def _dated_by(moment: datetime, prefix: str = "") -> Q:
    """Documents (``prefix`` leads to one) dated by ``moment``: occurred then, else recorded then."""
    occurred = f"{prefix}occurred_at"
    return Q(**{f"{occurred}__lte": moment}) | Q(**{f"{occurred}__isnull": True, f"{prefix}recorded_at__lte": moment})


def _dated_after(moment: datetime, prefix: str = "") -> Q:
    """Documents (``prefix`` leads to one) dated after ``moment``: the complement of ``_dated_by``."""
    occurred = f"{prefix}occurred_at"
    return Q(**{f"{occurred}__gt": moment}) | Q(**{f"{occurred}__isnull": True, f"{prefix}recorded_at__gt": moment})


def said_by(moment: datetime, org_id: int) -> Q:
    """Passages (``Chunk``) of the organisation the sources had said by ``moment``, in the versions
    read then (above)."""
    dated = Q(said_at__lte=moment) | (Q(said_at__isnull=True) & _dated_by(moment, "document__"))
    successor = "document__superseded_by__"
    kept = Q(superseded_at__isnull=True) | (
        Q(**{f"{successor}isnull": False})
        & _dated_after(moment, successor)
        & (Q(**{f"{successor}superseded_at__isnull": True}) | Q(**{f"{successor}superseded_by__isnull": False}))
    )
    return Q(org_id=org_id) & dated & kept


def facts_stated_by(moment: datetime) -> Q:
    """Facts a source had stated by ``moment``, whatever replaced them since: of a document dated by
    then (recorded by then when they have none)."""
    dated = Q(document__isnull=False) & _dated_by(moment, "document__")
    return dated | Q(document__isnull=True, recorded_at__lte=moment)


def facts_said_by(moment: datetime) -> Q:
    """Facts the sources had said by ``moment`` (``facts_stated_by``), believed now or replaced by
    a fact said after it."""
    dated = facts_stated_by(moment)
    later = Q(superseded_by__document__isnull=False) & _dated_after(moment, "superseded_by__document__")
    later |= Q(superseded_by__document__isnull=True, superseded_by__recorded_at__gt=moment)
    return dated & (Q(superseded_at__isnull=True) | (Q(superseded_by__isnull=False) & later))


def readable_and_said(actor: Actor, moment: datetime) -> Clause:
    """What the actor may see of what the sources had said by ``moment`` (passages aliased ``c``)."""
    access, params = readable_sql(actor)
    return Clause(f"{access} AND {SAID_BY_SQL}", {**params, "said_by": moment})
