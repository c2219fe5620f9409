"""How a moment is shown to people: in the organisation's time zone, labelled with that zone.

Every page shows times through ``local_time`` (the ``local_time`` template filter in
``brain_pages``), so a reader never has to guess whether "09:00" is theirs, the server's or UTC.
"""

from __future__ import annotations

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
    zone = zone_of(org)
    return f"{moment.astimezone(zone):%Y-%m-%d %H:%M} {zone.key}"
