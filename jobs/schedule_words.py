"""Schedules and moments in words, for people and for the models that read tool results.

Common shapes read as English ("weekdays at 09:00, Europe/Madrid", "every 15 minutes, UTC");
any other cron is spelt out field by field from the parsed sets, so the words never claim more
than the cron does (including the either-rule when both day fields are restricted).
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import date, datetime

from jobs.schedule_cron import Cron, zone

DAY_NAMES = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
MONTH_NAMES = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)
ALL_MINUTES, ALL_HOURS = frozenset(range(60)), frozenset(range(24))
ALL_DAYS, ALL_MONTHS, ALL_WEEKDAYS = frozenset(range(1, 32)), frozenset(range(1, 13)), frozenset(range(7))
MOST_TIMES_LISTED = 6


def describe_cron(cron: Cron, tz_name: str) -> str:
    """The cron in words, ending with its time zone: "weekdays at 09:00, Europe/Madrid"."""
    times, periodic = _times(cron)
    days = _days(cron)
    if periodic:
        on = "" if days.startswith(("on ", "every ")) else "on "
        words = f"{times} {on}{days}" if days else times
    else:
        words = f"{days or 'every day'} {times}"
    return f"{words}, {zone(tz_name).key}"


def _times(cron: Cron) -> tuple[str, bool]:
    """The times of day, and whether they read as a repetition ("every 15 minutes")."""
    minutes, hours = sorted(cron.minutes), sorted(cron.hours)
    every_hour = cron.hours == ALL_HOURS
    if cron.minutes == ALL_MINUTES:
        return ("every minute" if every_hour else f"every minute of {_hours_phrase(hours)}"), True
    step = _even_step(minutes, 60)
    if step and len(minutes) > 1:
        every = f"every {step} minutes"
        return (every if every_hour else f"{every} during {_hours_phrase(hours)}"), True
    if len(minutes) == 1:
        minute = minutes[0]
        if every_hour:
            return f"every hour at minute {minute:02d}", True
        hour_step = _even_step(hours, 24)
        if hour_step and len(hours) > 1:
            return f"every {hour_step} hours at minute {minute:02d}", True
        if len(hours) > MOST_TIMES_LISTED and _is_run(hours):
            return f"every hour from {hours[0]:02d}:{minute:02d} to {hours[-1]:02d}:{minute:02d}", True
    clock = [f"{h:02d}:{m:02d}" for h in hours for m in minutes]
    if len(clock) <= MOST_TIMES_LISTED:
        return f"at {_and(clock)}", False
    minute_words = _and(f"{m:02d}" for m in minutes)
    return f"at minutes {minute_words} past {_hours_phrase(hours)}", True


def _hours_phrase(hours: list[int]) -> str:
    if hours == list(range(24)):
        return "every hour"
    if _is_run(hours) and len(hours) > 2:
        return f"the hours {hours[0]:02d} to {hours[-1]:02d}"
    return f"the hour{'s' if len(hours) > 1 else ''} {_and(f'{h:02d}' for h in hours)}"


def _days(cron: Cron) -> str:
    """Which days, or '' for every day."""
    weekdays = _weekdays_phrase(cron.weekdays) if cron.weekdays != ALL_WEEKDAYS else ""
    months = _and(MONTH_NAMES[m - 1] for m in sorted(cron.months)) if cron.months != ALL_MONTHS else ""
    month_days = ""
    if cron.days != ALL_DAYS:
        listed = sorted(cron.days)
        noun = "day" if len(listed) == 1 else "days"
        month_days = f"on {noun} {_numbers(listed)} of {months or 'every month'}"
    elif months and not weekdays:
        return f"every day in {months}"
    if weekdays and months:
        weekdays = f"{weekdays} in {months}"
    if month_days and weekdays:
        if cron.day_restricted and cron.weekday_restricted:
            return f"{month_days} and on {weekdays}"
        return f"{month_days} that fall on {weekdays}"
    if weekdays:
        return weekdays
    return month_days


def _weekdays_phrase(weekdays: frozenset[int]) -> str:
    if weekdays == frozenset(range(5)):
        return "weekdays"
    if weekdays == frozenset({5, 6}):
        return "weekends"
    return _and(f"{DAY_NAMES[d]}s" for d in sorted(weekdays))


def _numbers(values: list[int]) -> str:
    """1, 2, 3, 4, 15 -> '1 to 4 and 15'."""
    groups: list[list[int]] = []
    for value in values:
        if groups and value == groups[-1][-1] + 1:
            groups[-1].append(value)
        else:
            groups.append([value])
    return _and(f"{g[0]} to {g[-1]}" if len(g) > 2 else ", ".join(map(str, g)) for g in groups)


def _even_step(values: list[int], period: int) -> int | None:
    """The step when the values are 0, n, 2n, ... covering the period evenly (n divides it)."""
    if len(values) < 2 or values[0] != 0:
        return None
    step = values[1] - values[0]
    if period % step or values != list(range(0, period, step)):
        return None
    return step


def _is_run(values: list[int]) -> bool:
    return values == list(range(values[0], values[-1] + 1))


def _and(items: Iterable[str]) -> str:
    words = list(items)
    if len(words) <= 1:
        return "".join(words)
    return f"{', '.join(words[:-1])} and {words[-1]}"


def describe_moment(moment: datetime, tz_name: str) -> str:
    """An aware moment on the local clock of that zone: "Monday 7 December 2026 09:00, Europe/Madrid"."""
    tz = zone(tz_name)
    local = moment.astimezone(tz)
    return f"{DAY_NAMES[local.weekday()]} {local.day} {MONTH_NAMES[local.month - 1]} {local:%Y %H:%M}, {tz.key}"


def describe_next(moment: datetime | None, tz_name: str, *, today: date | None = None) -> str:
    """ "next run Monday 7 December 09:00" on the zone's clock; the year is added when it is not
    the year of ``today`` (by default today in that zone), and "no next run" when there is none."""
    if moment is None:
        return "no next run"
    tz = zone(tz_name)
    local = moment.astimezone(tz)
    this_year = (today or datetime.now(tz).date()).year
    year = "" if local.year == this_year else f" {local.year}"
    return f"next run {DAY_NAMES[local.weekday()]} {local.day} {MONTH_NAMES[local.month - 1]}{year} {local:%H:%M}"
