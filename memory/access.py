"""The two rules every read of the memory runs under, each written once in both its forms.

- Who may see a row (documents, chunks, facts): the caller's organisation, a category open to
  all members or to one of the caller's groups, and shared scope or the caller's own.
- What was believed as of day D: recorded by the end of D and not superseded by then; without
  a day, what is believed now (not superseded).

The ORM filters (``readable``, ``believed_filter``) and the SQL clauses of the retrieval
statements (``readable_sql``, ``believed_sql``) are built from the same values side by side
here, and a test checks that both forms select the same rows.
"""

from __future__ import annotations

from datetime import UTC, date, datetime
from datetime import time as dtime
from typing import TYPE_CHECKING, Any

from django.db.models import Q

from brain.actors import Actor
from brain.models import Category

if TYPE_CHECKING:
    from memory.models import Document

SHARED, PERSONAL = "shared", "personal"


def readable_category_ids(*, actor: Actor) -> list[int]:
    groups = actor.user.groups.values_list("pk", flat=True)
    return list(
        Category.objects.filter(org=actor.org)
        .filter(Q(restricted=False) | Q(groups__in=groups))
        .values_list("pk", flat=True)
        .distinct()
    )


def readable(actor: Actor, categories: list[int] | None = None) -> Q:
    """Rows (Document, Chunk, Fact) the actor may see."""
    cats = readable_category_ids(actor=actor) if categories is None else categories
    return Q(org=actor.org) & Q(category_id__in=cats) & (Q(scope=SHARED) | Q(owner=actor.user))


def readable_clause(alias: str = "c") -> str:
    """``readable`` in SQL for rows aliased ``alias``, with the parameters org, cats and user."""
    return (
        f"{alias}.org_id = %(org)s AND {alias}.category_id = ANY(%(cats)s) "
        f"AND ({alias}.scope = '{SHARED}' OR {alias}.owner_id = %(user)s)"
    )


def readable_sql(actor: Actor, alias: str = "c", categories: list[int] | None = None) -> tuple[str, dict[str, Any]]:
    """The same rule as ``readable``, for rows aliased ``alias`` in raw SQL."""
    cats = readable_category_ids(actor=actor) if categories is None else categories
    return readable_clause(alias), {"org": actor.org.pk, "cats": cats, "user": actor.user.pk}


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


def believed_sql(as_of: date | None, include_superseded: bool = False, alias: str = "c") -> tuple[str, dict[str, Any]]:
    """The same rule as ``believed_filter``, for raw SQL (``TRUE`` when nothing is filtered)."""
    if as_of is None:
        return ("TRUE", {}) if include_superseded else (f"{alias}.superseded_at IS NULL", {})
    sql = f"{alias}.recorded_at <= %(as_of)s"
    if not include_superseded:
        sql += f" AND ({alias}.superseded_at IS NULL OR {alias}.superseded_at > %(as_of)s)"
    return sql, {"as_of": end_of_day(as_of)}


def superseded_by_then(superseded_at: datetime | None, as_of: date | None) -> bool:
    """Whether a row shows as superseded in a view of ``as_of`` (now without it)."""
    if superseded_at is None:
        return False
    return as_of is None or superseded_at <= end_of_day(as_of)


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
    return Q(org_id=document.org_id) & categories & audience
