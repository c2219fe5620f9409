"""Stepping a cron through local time, and reading the moment of a one-off job.

A cron is read on the local clock of its time zone. Twice a year that clock jumps:

- Spring forward: a local time that does not exist that day (02:30 in Europe/Madrid on
  29 March 2026, when 02:00 becomes 03:00) runs ONCE, at the first existing minute after the
  gap (03:00). Several times inside the gap ("*/15" at 02:00, 02:15, ...) make that one run.
- Fall back: a local time that happens twice (02:30 in Europe/Madrid on 25 October 2026) runs
  once, at its first occurrence (fold=0, still summer time); the repeated hour adds no runs.
- Every other local time keeps its wall-clock hour: a 09:00 job is 09:00 local all year, and
  its UTC time moves by the change of offset.

Every moment returned is an aware datetime in UTC.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo

from jobs.schedule_cron import Cron, ScheduleError

ONE_OFF_DEFAULT_TIME = time(9, 0)
MOMENT_SHAPE = "'2026-10-19T09:00' (a date and a time, seconds optional) or '2026-10-19' (09:00 that day)"
_MOMENT = re.compile(
    r"(?P<date>\d{4}-\d{2}-\d{2})"
    r"(?:[T ](?P<hour>\d{2}):(?P<minute>\d{2})(?::(?P<second>\d{2}))?(?P<offset>Z|[+-]\d{2}:\d{2})?)?"
)
# A possible cron runs at least once in any 28 years, or 40 around a year like 2100 that is not a
# leap year ("0 0 29 2 sun"); the search stops well after that.
SEARCH_YEARS = 60


def local_instant(wall: datetime, tz: ZoneInfo) -> datetime:
    """The UTC moment a naive local wall-clock time stands for, by the rules above."""
    first = wall.replace(tzinfo=tz, fold=0)
    if first.utcoffset() == wall.replace(tzinfo=tz, fold=1).utcoffset() or _exists(wall, tz):
        return first.astimezone(UTC)
    # In a gap: the first existing minute after it. Gaps are an hour or so; a skipped day
    # (Pacific/Apia, 30 December 2011) is the longest there has been.
    later = wall.replace(second=0, microsecond=0)
    while not _exists(later, tz):
        later += timedelta(minutes=1)
    return later.replace(tzinfo=tz).astimezone(UTC)


def _exists(wall: datetime, tz: ZoneInfo) -> bool:
    there = wall.replace(tzinfo=tz, fold=0)
    return there.astimezone(UTC).astimezone(tz).replace(tzinfo=None) == wall


def next_run(cron: Cron, tz: ZoneInfo, after: datetime) -> datetime:
    """The first run strictly after ``after`` (aware), as an aware UTC datetime.

    A run whose local time falls in a spring-forward gap happens once, at the first existing
    minute after the gap; a local time that happens twice runs once, at its first occurrence.
    """
    if after.tzinfo is None or after.utcoffset() is None:
        raise ValueError("next_run needs an aware datetime (with a time zone)")
    start = after.astimezone(tz).replace(tzinfo=None, second=0, microsecond=0)
    # The mapping from local wall time to UTC never goes backwards, so no wall time before
    # `start` can run after `after`; candidates are walked in wall-clock order from there.
    for wall in _wall_times(cron, start):
        moment = local_instant(wall, tz)
        if moment > after:
            return moment
    raise ScheduleError(f"'{cron.expression}' never runs after {after:%Y-%m-%d %H:%M} in {tz.key}.")


def _wall_times(cron: Cron, start: datetime) -> Iterator[datetime]:
    hours, minutes = sorted(cron.hours), sorted(cron.minutes)
    day, last = start.date(), _years_later(start.date(), SEARCH_YEARS)
    while day <= last:
        if day.month not in cron.months:
            day = _first_of_next_month(day)
            continue
        if cron.runs_on(day):
            for hour in hours:
                if day == start.date() and hour < start.hour:
                    continue
                for minute in minutes:
                    wall = datetime.combine(day, time(hour, minute))
                    if wall >= start:
                        yield wall
        day += timedelta(days=1)


def _first_of_next_month(day: date) -> date:
    return date(day.year + day.month // 12, day.month % 12 + 1, 1)


def _years_later(day: date, years: int) -> date:
    return date(min(day.year + years, date.max.year - 1), 12, 31)


def runs_between(cron: Cron, tz: ZoneInfo, start: datetime, end: datetime, limit: int = 1000) -> list[datetime]:
    """The runs from ``start`` (included) up to ``end`` (excluded), at most ``limit`` of them, in UTC."""
    runs: list[datetime] = []
    moment = start - timedelta(microseconds=1)
    while len(runs) < limit:
        try:
            moment = next_run(cron, tz, moment)
        except ScheduleError:
            break
        if moment >= end:
            break
        runs.append(moment)
    return runs


def parse_moment(at: str, tz: ZoneInfo, now: datetime) -> datetime:
    """When a one-off job runs: ``at`` read in ``tz``, as an aware UTC datetime after ``now``.

    ``at`` is an ISO date and time ('2026-10-19T09:00', seconds optional, a space for the 'T'
    also read) or a date alone, meaning 09:00 that day. An offset written in the string
    ('+02:00' or 'Z') is honoured: it names one moment exactly, whatever ``tz`` is. A local time
    in a spring-forward gap moves to the first minute after the gap; one that happens twice is
    its first occurrence.
    """
    text = (at or "").strip()
    found = _MOMENT.fullmatch(text)
    if found is None:
        raise ScheduleError(f"'{text}' is not a date and time; write {MOMENT_SHAPE}, in {tz.key} time.")
    try:
        day = date.fromisoformat(found["date"])
        clock = time(int(found["hour"]), int(found["minute"]), int(found["second"] or 0)) if found["hour"] else None
        wall = datetime.combine(day, clock or ONE_OFF_DEFAULT_TIME)
        if found["offset"]:
            moment = datetime.fromisoformat(f"{wall.isoformat()}{found['offset'].replace('Z', '+00:00')}")
            moment = moment.astimezone(UTC)
        else:
            moment = local_instant(wall, tz)
    except (ValueError, OverflowError) as exc:
        raise ScheduleError(f"'{text}' is not a real date and time ({exc}); write {MOMENT_SHAPE}.") from exc
    if moment <= now:
        shown = moment.astimezone(tz) if found["offset"] else wall
        raise ScheduleError(
            f"{shown:%Y-%m-%d %H:%M} is in the past; it is now {now.astimezone(tz):%Y-%m-%d %H:%M} in {tz.key}."
        )
    return moment
