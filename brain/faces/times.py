"""How a moment is shown to people: in the organisation's time zone, labelled with that zone.

Every page shows times through ``page_time`` (the ``local_time`` template filter in
``brain_pages``), so a reader never has to guess whether "09:00" is theirs, the server's or UTC: in
the zone the reader chose on their account page, else the organisation's.
"""

from __future__ import annotations

from collections.abc import Callable
from contextvars import ContextVar
from datetime import date, datetime
from zoneinfo import ZoneInfo

from django.conf import settings

from brain.models import Organisation


def zone_of(org: Organisation | None) -> ZoneInfo:
    """The organisation's time zone; the server's (``TIME_ZONE``) when there is no organisation."""
    return ZoneInfo(org.time_zone if org is not None and org.time_zone else settings.TIME_ZONE)


def local_day(moment: datetime, org: Organisation | None) -> date:
    """The day ``moment`` falls on in the organisation's zone: the day a page shows beside it."""
    return moment.astimezone(zone_of(org)).date()


def local_time(moment: datetime, org: Organisation | None) -> str:
    """``moment`` as "2026-03-04 09:15 Europe/Berlin": minutes, in the organisation's zone, named."""
    return _named(moment, zone_of(org))


# The zone the person reading a page chose on their account page, for the request being answered
# (set by brain.faces.web.ReaderTimeZoneMiddleware): a function, so that it is looked up only when a page
# shows a time. Unset outside pages: mails and reports keep the organisation's zone.
READER_ZONE: ContextVar[Callable[[], ZoneInfo | None] | None] = ContextVar("brain_reader_zone", default=None)


def page_time(moment: datetime, org: Organisation | None) -> str:
    """``moment`` for a page: in the zone its reader chose, else in the organisation's; named."""
    chosen = READER_ZONE.get()
    return _named(moment, (chosen() if chosen is not None else None) or zone_of(org))


def _named(moment: datetime, zone: ZoneInfo) -> str:
    return f"{moment.astimezone(zone):%Y-%m-%d %H:%M} {zone.key}"
