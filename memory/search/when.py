"""The time a question speaks of: "in May", "last week", "on 8 May 2026", "in 2025", "during
the summer".

``window`` reads it as a span of days relative to a reference day (the question's ``as_of``, or
today); search then favours passages said inside it. A month, a day or a season named without a
year is first read as the latest one (this year's unless it is still to come), and the window
says so: search moves it back a year at a time to the latest one in which anything the caller
may read was said (an archive of 2023 asked "what did we decide in March?"). Only plain English
expressions are read; anything else leaves the question without a window, which changes nothing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta

MONTHS = {
    name: number
    for number, names in enumerate(
        [
            ("january", "jan"),
            ("february", "feb"),
            ("march", "mar"),
            ("april", "apr"),
            ("may",),
            ("june", "jun"),
            ("july", "jul"),
            ("august", "aug"),
            ("september", "sep", "sept"),
            ("october", "oct"),
            ("november", "nov"),
            ("december", "dec"),
        ],
        start=1,
    )
    for name in names
}
MONTH_NAMES = "|".join(sorted(MONTHS, key=len, reverse=True))  # a month in a pattern, longest first
_ISO = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")
_DAY_MONTH = re.compile(rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?({MONTH_NAMES})\.?,?(?:\s+(\d{{4}}))?\b", re.I)
_MONTH_DAY = re.compile(rf"\b({MONTH_NAMES})\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?\b(?:,?\s+(\d{{4}}))?", re.I)
# "in May", "May 2026", "during March of 2025"; a bare "may" is a verb unless a year or "in" says otherwise.
_MONTH_ONLY = re.compile(
    rf"\b(?:(in|during|since|by|early|late|mid)[\s-]+)?({MONTH_NAMES})\b\.?(?:\s+(?:of\s+)?(\d{{4}}))?", re.I
)
_YEAR = re.compile(r"\b(?:in|during)\s+((?:19|20)\d{2})\b", re.I)
_AGO = re.compile(r"\b(\d+|a|an|one|two|three|four|five|six)\s+(day|week|month|year)s?\s+ago\b", re.I)
_RELATIVE = re.compile(r"\b(yesterday|today|(?:last|this|past)\s+(?:week|month|year|weekend))\b", re.I)
# "in the summer", "during winter", "last summer", "summer of 2023"; the northern hemisphere's.
_SEASON = re.compile(
    r"\b(?:(in|during|over|through|this|last)\s+(?:the\s+)?)?(summer|winter|spring|autumn|fall)\b"
    r"(?:\s+(?:of\s+)?(\d{4}))?",
    re.I,
)
_SEASON_MONTHS = {"spring": 3, "summer": 6, "autumn": 9, "fall": 9, "winter": 12}  # first of three months
_COUNTS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6}


@dataclass(frozen=True)
class Window:
    """Days from ``start`` up to but not including ``end``; ``yearless`` when the question named
    no year, so that the same days of an earlier year may be what it means."""

    start: date
    end: date
    yearless: bool = False

    def moments(self) -> tuple[datetime, datetime]:
        return datetime.combine(self.start, time.min, tzinfo=UTC), datetime.combine(self.end, time.min, tzinfo=UTC)

    def years_earlier(self, years: int) -> Window | None:
        """The same days ``years`` years before; None for a 29 February without one."""
        try:
            start, end = self.start.replace(year=self.start.year - years), self.end.replace(year=self.end.year - years)
        except ValueError:
            return None
        return Window(start, end, self.yearless)


def window(question: str, today: date) -> Window | None:
    """The first time expression in the question as a window of days, or None. A time at the
    edge of the calendar ("9999-12-31", "May 0000") has no window: it is no time to search in."""
    for reader in (_iso, _day_month, _month_day, _relative, _ago, _month, _season, _year):
        try:
            found = reader(question, today)
        except (ValueError, OverflowError):
            continue
        if found is not None:
            return found
    return None


def _day(year: int, month: int, day: int, *, yearless: bool = False) -> Window | None:
    try:
        moment = date(year, month, day)
    except ValueError:
        return None
    return Window(moment, moment + timedelta(days=1), yearless)


def _iso(question: str, today: date) -> Window | None:
    match = _ISO.search(question)
    return _day(int(match[1]), int(match[2]), int(match[3])) if match else None


def _latest_year(month: int, today: date) -> int:
    """A month without a year is the most recent one (this year's, unless it is still to come)."""
    return today.year if month <= today.month else today.year - 1


def _day_month(question: str, today: date) -> Window | None:
    match = _DAY_MONTH.search(question)
    if not match:
        return None
    month = MONTHS[match[2].lower()]
    if match[3]:
        return _day(int(match[3]), month, int(match[1]))
    return _day(_latest_year(month, today), month, int(match[1]), yearless=True)


def _month_day(question: str, today: date) -> Window | None:
    match = _MONTH_DAY.search(question)
    if not match or int(match[2]) > 31:
        return None
    month = MONTHS[match[1].lower()]
    if match[3]:
        return _day(int(match[3]), month, int(match[2]))
    return _day(_latest_year(month, today), month, int(match[2]), yearless=True)


def _month(question: str, today: date) -> Window | None:
    for match in _MONTH_ONLY.finditer(question):
        word, year = match[2], match[3]
        if word.lower() == "may" and not (match[1] or year or word == "May"):
            continue  # "what may happen": the verb
        if word == "May" and not (match[1] or year) and match.start(2) == 0:
            continue  # "May we ...": a question that opens with the verb
        month = MONTHS[word.lower()]
        start = date(int(year) if year else _latest_year(month, today), month, 1)
        end = date(start.year + (month == 12), month % 12 + 1, 1)
        return Window(start, end, yearless=not year)
    return None


def _season(question: str, today: date) -> Window | None:
    """Three months from the first of the season's first month ("winter 2025" begins in December
    2025). A season needs "in", "during", "this", "last" or a year with it: "summer plans",
    "prices fall" and "spring cleaning" name no time to search in."""
    for match in _SEASON.finditer(question):
        named, year = match[2].lower(), match[3]
        if not (match[1] or year):
            continue
        month = _SEASON_MONTHS[named]
        first = int(year) if year else _latest_year(month, today)
        end_month = month + 3
        end = date(first + (end_month > 12), (end_month - 1) % 12 + 1, 1)
        return Window(date(first, month, 1), end, yearless=not year)
    return None


def _year(question: str, today: date) -> Window | None:
    match = _YEAR.search(question)
    return Window(date(int(match[1]), 1, 1), date(int(match[1]) + 1, 1, 1)) if match else None


def _relative(question: str, today: date) -> Window | None:
    match = _RELATIVE.search(question)
    if not match:
        return None
    phrase = " ".join(match[1].lower().split())
    monday = today - timedelta(days=today.weekday())
    first = today.replace(day=1)
    spans = {
        "yesterday": (today - timedelta(days=1), today),
        "today": (today, today + timedelta(days=1)),
        "this week": (monday, today + timedelta(days=1)),
        "last week": (monday - timedelta(days=7), monday),
        "past week": (today - timedelta(days=7), today + timedelta(days=1)),
        "last weekend": (monday - timedelta(days=2), monday),
        "this weekend": (monday + timedelta(days=5), monday + timedelta(days=7)),
        "this month": (first, today + timedelta(days=1)),
        "last month": ((first - timedelta(days=1)).replace(day=1), first),
        "past month": (today - timedelta(days=31), today + timedelta(days=1)),
        "this year": (date(today.year, 1, 1), today + timedelta(days=1)),
        "last year": (date(today.year - 1, 1, 1), date(today.year, 1, 1)),
        "past year": (today - timedelta(days=366), today + timedelta(days=1)),
    }
    start, end = spans.get(phrase, (None, None))
    return Window(start, end) if start and end else None


def _ago(question: str, today: date) -> Window | None:
    match = _AGO.search(question)
    if not match:
        return None
    count = min(_COUNTS.get(match[1].lower()) or int(match[1][:4]), 100)
    days = {"day": 1, "week": 7, "month": 30, "year": 365}[match[2].lower()] * count
    centre = today - timedelta(days=days)
    slack = max(1, days // 4)  # "three weeks ago" is roughly then
    return Window(centre - timedelta(days=slack), centre + timedelta(days=slack + 1))


_CLOCK = re.compile(r"\b(\d{1,2}):(\d{2})(?::(\d{2}))?\s*([ap])?\.?m?\.?\b", re.I)
_EPOCH = re.compile(r"^\d{9,13}(\.\d+)?$")  # seconds since 1970 (13 digits: milliseconds)
_YEAR_FIRST = re.compile(r"^(\d{4})[/.-](\d{1,2})[/.-](\d{1,2})(?!\d)")
_YEAR_LAST = re.compile(r"^(\d{1,2})([/.-])(\d{1,2})[/.-](\d{4})(?!\d)")


def parse_moment(text: str) -> datetime | None:
    """A date and time as people and exports write them: ISO 8601 ("2026-05-08T13:56:00+02:00"),
    a day with a written month and a year, with or without a clock time ("1:56 pm on 8 May,
    2026", "May 8, 2026 13:56"), digits ("2026/05/08 (Fri) 13:56", "08.05.2026 13:56",
    "5/8/2026 1:56 PM"), or seconds since 1970 ("1778248560"). A time without a zone is UTC;
    None when no date is found."""
    text = text.strip()
    if _EPOCH.match(text):
        seconds = float(text) / (1000 if len(text.split(".")[0]) == 13 else 1)
        try:
            return datetime.fromtimestamp(seconds, tz=UTC)
        except (ValueError, OverflowError, OSError):  # past the calendar
            return None
    iso = text
    if year_first := _YEAR_FIRST.match(text):  # "2026/05/08 13:56" written as ISO 8601
        iso = "{}-{:0>2}-{:0>2}{}".format(*year_first.groups(), text[year_first.end() :].replace(" ", "T", 1))
    try:
        parsed = datetime.fromisoformat(iso)
        return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)
    except ValueError:
        pass  # not ISO 8601, or a weekday or an am/pm after the date: read below
    found = _digits(text) or _written(text)
    if found is None:
        return None
    hour = minute = 0
    if clock := _CLOCK.search(text):
        hour, minute = int(clock[1]), int(clock[2])
        if clock[4] and clock[4].lower() == "p" and hour < 12:
            hour += 12
        elif clock[4] and clock[4].lower() == "a" and hour == 12:
            hour = 0
    try:
        return datetime(*found, hour, minute, tzinfo=UTC)
    except ValueError:
        return None


def _digits(text: str) -> tuple[int, int, int] | None:
    """A date in digits at the start: year first, or year last, where a dot or a dash puts the day
    first ("08.05.2026"), and a slash the month ("5/8/2026"), unless the first number is no month."""
    if match := _YEAR_FIRST.match(text):
        return int(match[1]), int(match[2]), int(match[3])
    if match := _YEAR_LAST.match(text):
        first, second = int(match[1]), int(match[3])
        day_first = match[2] != "/" or first > 12
        return (int(match[4]), second, first) if day_first else (int(match[4]), first, second)
    return None


def _written(text: str) -> tuple[int, int, int] | None:
    """A day with a written month and a year: "8 May 2026", "May 8, 2026"."""
    if (day := _DAY_MONTH.search(text)) and day[3]:
        return int(day[3]), MONTHS[day[2].lower()], int(day[1])
    if (day := _MONTH_DAY.search(text)) and day[3]:
        return int(day[3]), MONTHS[day[1].lower()], int(day[2])
    return None
