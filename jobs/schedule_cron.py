"""Reading and checking five-field cron expressions and IANA time zone names.

The rules, in plain sentences:

- A cron has five fields: minute (0-59), hour (0-23), day of the month (1-31), month (1-12 or
  jan-dec) and weekday (0-7 or mon-sun; 0 and 7 are both Sunday). Each field is ``*``, a number,
  a range ``a-b``, a step ``*/n`` or ``a-b/n``, or a comma list of those. Nothing else is read:
  no seconds, no years, no ``@daily`` shortcuts, no ``?``, ``L``, ``W`` or ``#``.
- Day of the month and weekday combine as in the standard cron daemons: when both fields are
  restricted (neither starts with ``*``), a day matches if EITHER matches ("0 9 1 * mon" runs on
  the 1st and on every Monday); otherwise a day must match both (a ``*`` field matches all).
- A cron that can never run (the 30th of February) is refused here, so stepping always ends.
- A job may run at most once every five minutes: each run is a whole assistant session.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from datetime import date, timedelta
from functools import lru_cache
from zoneinfo import ZoneInfo, available_timezones

FIVE_FIELDS = "minute hour day-of-month month weekday"
EXAMPLE = "'0 9 * * 1-5' is weekdays at 09:00"
MONTH_NAMES = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
# Cron numbering: 0 (and 7) is Sunday.
WEEKDAY_NAMES = ("sun", "mon", "tue", "wed", "thu", "fri", "sat")
LONGEST_MONTH = (31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)
SHORTCUTS = {
    "@yearly": "0 0 1 1 *",
    "@annually": "0 0 1 1 *",
    "@monthly": "0 0 1 * *",
    "@weekly": "0 0 * * 0",
    "@daily": "0 0 * * *",
    "@midnight": "0 0 * * *",
    "@hourly": "0 * * * *",
}


class ScheduleError(ValueError):
    """What is wrong, in words a person or a model can act on."""


@dataclass(frozen=True)
class _Field:
    name: str
    lo: int
    hi: int  # highest value '*' stands for
    top: int  # highest value one may write (7 for Sunday in the weekday field)
    names: tuple[str, ...] = ()
    first_name_value: int = 0


MINUTE = _Field("minute", 0, 59, 59)
HOUR = _Field("hour", 0, 23, 23)
DAY = _Field("day-of-month", 1, 31, 31)
MONTH = _Field("month", 1, 12, 12, MONTH_NAMES, 1)
WEEKDAY = _Field("weekday", 0, 6, 7, WEEKDAY_NAMES, 0)
FIELDS = (MINUTE, HOUR, DAY, MONTH, WEEKDAY)


@dataclass(frozen=True)
class Cron:
    """A parsed cron. ``weekdays`` uses Python's numbering: 0 is Monday, 6 is Sunday."""

    expression: str  # the five fields as written, lower case, single-spaced
    minutes: frozenset[int]
    hours: frozenset[int]
    days: frozenset[int]
    months: frozenset[int]
    weekdays: frozenset[int]
    day_restricted: bool
    weekday_restricted: bool

    def runs_on(self, day: date) -> bool:
        """Whether the cron fires on this calendar day (at the times of its minute and hour fields)."""
        if day.month not in self.months:
            return False
        day_ok, weekday_ok = day.day in self.days, day.weekday() in self.weekdays
        if self.day_restricted and self.weekday_restricted:
            return day_ok or weekday_ok
        return day_ok and weekday_ok


@lru_cache(maxsize=1)
def _zone_names() -> dict[str, str]:
    return {name.lower(): name for name in available_timezones()}


def zone(name: str | None) -> ZoneInfo:
    """The IANA time zone of that name (any letter case); blank means UTC."""
    cleaned = (name or "").strip()
    if not cleaned:
        return ZoneInfo("UTC")
    known = _zone_names().get(cleaned.lower())
    if known is None:
        close = difflib.get_close_matches(cleaned.lower(), list(_zone_names()), n=1, cutoff=0.75)
        hint = f"did you mean '{_zone_names()[close[0]]}'? " if close else ""
        raise ScheduleError(
            f"'{cleaned}' is not an IANA time zone; {hint}"
            "write a name like 'Europe/Madrid', 'America/New_York' or 'UTC'."
        )
    return ZoneInfo(known)


def parse_cron(expression: str) -> Cron:
    """Read a five-field cron, or raise ScheduleError saying which field is wrong and how."""
    text = (expression or "").strip().lower()
    if not text:
        raise ScheduleError(f"The schedule is empty; write five cron fields ({FIVE_FIELDS}), e.g. {EXAMPLE}.")
    if text.startswith("@"):
        instead = SHORTCUTS.get(text)
        if instead is None:
            raise ScheduleError(f"'{text}' is not accepted; write five cron fields ({FIVE_FIELDS}), e.g. {EXAMPLE}.")
        raise ScheduleError(f"Shortcuts like '{text}' are not accepted; write '{instead}' instead.")
    parts = text.split()
    if len(parts) != 5:
        extra = " (no seconds and no year)" if len(parts) in (6, 7) else ""
        raise ScheduleError(
            f"'{text}' has {len(parts)} field{'s' if len(parts) != 1 else ''}; a cron here has exactly five"
            f"{extra}: {FIVE_FIELDS}, e.g. {EXAMPLE}."
        )
    sets = [_parse_field(part, field) for part, field in zip(parts, FIELDS, strict=True)]
    minutes, hours, days, months, cron_weekdays = sets
    cron = Cron(
        expression=" ".join(parts),
        minutes=minutes,
        hours=hours,
        days=days,
        months=months,
        weekdays=frozenset((value - 1) % 7 for value in cron_weekdays),
        day_restricted=not parts[2].startswith("*"),
        weekday_restricted=not parts[4].startswith("*"),
    )
    _refuse_impossible(cron)
    return cron


def _parse_field(text: str, field: _Field) -> frozenset[int]:
    values: set[int] = set()
    for item in text.split(","):
        values.update(_parse_item(item, text, field))
    return frozenset(values)


def _parse_item(item: str, whole: str, field: _Field) -> range:
    where = f"the {field.name} field '{whole}'"
    if not item:
        raise ScheduleError(f"{where} has an empty item; separate values with single commas, e.g. '1,15'.")
    if "?" in item or "#" in item or re.fullmatch(r"\d*l|\d*w|lw", item):
        raise ScheduleError(f"{where} uses '{item}', which this cron does not read; use numbers, ranges and steps.")
    base, slash, step_text = item.partition("/")
    if base == "*":
        lo, hi = field.lo, field.hi
    elif "-" in base:
        first, _, last = base.partition("-")
        lo, hi = _value(first, where, field), _value(last, where, field)
        if lo > hi:
            raise ScheduleError(
                f"{where} has the range '{base}', which goes down; ranges go up "
                f"(write '{lo}-{field.top},{field.lo}-{hi}' to wrap around)."
            )
    else:
        lo = _value(base, where, field)
        if slash:
            raise ScheduleError(
                f"{where} has a step after a single value ('{item}'); write '{lo}-{field.hi}/{step_text}' "
                f"for every {step_text} from {lo}."
            )
        hi = lo
    if not slash:
        return range(lo, hi + 1)
    if not step_text.isdigit() or int(step_text) == 0:
        raise ScheduleError(f"{where} has the step '{step_text}'; a step is a whole number of 1 or more.")
    step = int(step_text)
    if step > hi - lo:
        raise ScheduleError(
            f"{where} has the step {step}, which leaves only '{lo}' in {lo}-{hi}; cron cannot count past its "
            f"field ({field.name} values run {field.lo}-{field.hi}), so write the value itself or a list."
        )
    return range(lo, hi + 1, step)


def _value(text: str, where: str, field: _Field) -> int:
    if text.isdigit():
        value = int(text)
    elif text in field.names:
        value = field.names.index(text) + field.first_name_value
    else:
        names = f" or a name {field.names[0]}-{field.names[-1]}" if field.names else ""
        raise ScheduleError(f"{where} has '{text}', which is not a number{names}.")
    if not field.lo <= value <= field.top:
        raise ScheduleError(f"{where} has {value}, out of range {field.lo}-{field.top}.")
    return value


def _refuse_impossible(cron: Cron) -> None:
    """A day-of-month that no chosen month has (the 30th of February) never runs.

    Only that can make a cron impossible: when both day fields are restricted either one suffices,
    and every day of every month falls on every weekday in some year.
    """
    if cron.day_restricted and cron.weekday_restricted:
        return
    if any(min(cron.days) <= LONGEST_MONTH[month - 1] for month in cron.months):
        return
    months = ", ".join(MONTH_NAMES[m - 1].capitalize() for m in sorted(cron.months))
    raise ScheduleError(
        f"'{cron.expression}' never runs: {months} never has day {min(cron.days)}. "
        "For the last day of a month, use day 28 or list the days and months that exist."
    )


def check_interval(cron: Cron, tz: ZoneInfo, *, minimum_minutes: int = 5) -> None:
    """Refuse a cron that can run more often than once every ``minimum_minutes``.

    The gap is measured on the local clock of ``tz``, where the cron is read, including the step
    from one day's last run to the next day's first. A daylight-saving change can bring two runs
    closer once (01:58 and the first minute after a skipped hour); that is not refused, because
    it does not make the job frequent.
    """
    gap = _shortest_gap_minutes(cron)
    if gap >= minimum_minutes:
        return
    raise ScheduleError(
        f"'{cron.expression}' can run {gap} minute{'s' if gap != 1 else ''} apart ({tz.key} time); a scheduled job "
        f"runs at most once every {minimum_minutes} minutes, because every run is a full assistant session "
        "that writes a report into a chat: this is a company memory, not a cron daemon. "
        f"Use '*/{minimum_minutes} * * * *' or a slower schedule."
    )


def _shortest_gap_minutes(cron: Cron) -> int:
    times = sorted(h * 60 + m for h in cron.hours for m in cron.minutes)
    gaps = [later - earlier for earlier, later in zip(times, times[1:], strict=False)]
    if _runs_on_two_days_in_a_row(cron):
        gaps.append(times[0] + 24 * 60 - times[-1])
    return min(gaps, default=24 * 60)


def _runs_on_two_days_in_a_row(cron: Cron) -> bool:
    # Eight years hold every weekday on every date and a 29 February; enough to find a pair.
    day, last = date(2024, 1, 1), date(2031, 12, 31)
    runs_yesterday = False
    while day <= last:
        runs_today = cron.runs_on(day)
        if runs_today and runs_yesterday:
            return True
        runs_yesterday, day = runs_today, day + timedelta(days=1)
    return False
