"""What the three registers share: the organisation's day, ids, text rules and the audience of
what an entry was taken from."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import date, datetime
from typing import Any
from zoneinfo import ZoneInfo

from django.db.models import Q, QuerySet
from django.utils import timezone

from brain.core.actors import Actor
from brain.core.errors import InvalidArgument, NotFound
from brain.core.selectors import features_on
from brain.infra.ids import parse_numeric_id
from brain.models import Category, Organisation
from memory.access import readable_entries as access_readable_entries
from memory.models import Document, Scope
from registers.models import Scan

REGISTERS = ("commitments", "contradictions", "glossary")


def switched_on(org: Organisation) -> set[str]:
    """The registers the organisation has switched on."""
    return features_on(org) & set(REGISTERS)


def local_today(org: Organisation) -> date:
    """The organisation's calendar day now (its time zone)."""
    return timezone.now().astimezone(ZoneInfo(org.time_zone)).date()


def local_day(org: Organisation, moment: datetime) -> date:
    return moment.astimezone(ZoneInfo(org.time_zone)).date()


def entry_id(value: str, prefix: str, noun: str) -> int:
    """The number in ``cmt_12``; an id of another shape is "not found", like an id of another
    organisation, so the answer says nothing about what exists."""
    number = parse_numeric_id(value, prefix, bare=True)
    if number is None:
        raise NotFound(f"No {noun} {value!r}; pass an id as the list returns it ({prefix}_...).")
    return number


def one_of(value: str | None, field: str, allowed: tuple[str, ...], default: str) -> str:
    chosen = default if value is None else value
    if chosen not in allowed:
        raise InvalidArgument(f"{field} must be one of {', '.join(allowed)}; got {chosen!r}.")
    return chosen


def general_category(org: Organisation) -> Category:
    return Category.objects.get(org=org, slug=Category.DEFAULT_SLUG)


def readable_entries(actor: Actor) -> Q:
    """Register entries (with category, scope and owner) the actor may read: the memory's rule."""
    return access_readable_entries(actor)


def document_audience(document: Document) -> dict[str, object]:
    """The audience an entry taken from ``document`` keeps."""
    return {"category_id": document.category_id, "scope": document.scope, "owner_id": document.owner_id}


def shared_audience(org: Organisation) -> dict[str, object]:
    """The audience of an entry a person records for the organisation."""
    return {"category_id": general_category(org).pk, "scope": Scope.SHARED, "owner_id": None}


def batches_after_mark(
    org: Organisation,
    register: str,
    rows: Callable[[int], QuerySet[Any]],
    size: int,
    progress: Callable[[int], None] | None = None,
) -> Iterator[list[Any]]:
    """Batches of rows (by id) after where the register's last scan stopped. The mark moves past a
    batch only once the caller has handled it, so an interrupted scan resumes where it failed."""
    scan, _ = Scan.objects.get_or_create(org=org, register=register)
    while batch := list(rows(scan.last_id)[:size]):
        yield batch
        scan.last_id = batch[-1].pk
        scan.save(update_fields=["last_id"])
        if progress:
            progress(len(batch))
    scan.finished_at = timezone.now()
    scan.save(update_fields=["finished_at"])
