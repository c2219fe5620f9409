"""Deadlines of a promise: the memory extraction's date reading, pointed at the future.

``memory.extraction.dates`` reads a date phrase as the nearest such day, before or after the
document's date, which suits facts ("left on Friday"). A promise looks ahead and is never due before
it was made: "by Friday" said on a Wednesday is two days later, "by 3 May" said in June is next May,
"next week" is due by the end of that week.
"""

from __future__ import annotations

import calendar
import datetime
import re
from typing import TYPE_CHECKING

from memory.extraction import sentence_dates

if TYPE_CHECKING:
    from spacy.tokens import Span

_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_WEEKDAY_RE = re.compile(r"\b(" + "|".join(_WEEKDAYS) + r")\b", re.I)
_YEAR_RE = re.compile(r"\b(19|20)\d\d\b")
_WEEK_RE = re.compile(r"\bweek\b", re.I)
_OWN_PHRASES = re.compile(
    r"\b(?:(?P<today>today|tonight|this (?:morning|afternoon|evening)|(?:the )?end of (?:the )?day|eod)"
    r"|(?P<week>(?:the )?end of (?:the |this )?week)"
    r"|(?P<month>(?:the )?end of (?:the |this )?month))\b",
    re.I,
)
_FRIDAY = 4


def _friday_of(day: datetime.date) -> datetime.date:
    return day + datetime.timedelta(days=_FRIDAY - day.weekday())


def _own_phrase(text: str, said_on: datetime.date) -> datetime.date | None:
    m = _OWN_PHRASES.search(text)
    if m is None:
        return None
    if m["today"]:
        return said_on
    if m["week"]:
        return max(_friday_of(said_on), said_on)
    return said_on.replace(day=calendar.monthrange(said_on.year, said_on.month)[1])


def _ahead(phrase: str, day: datetime.date, said_on: datetime.date) -> datetime.date:
    """The reading of ``phrase`` that lies on or after ``said_on``: a promise is never due before it was
    made. A weekday is already the next one; a week is promised by its Friday; a day or month read
    behind the promise without a year of its own is next year's; anything else still behind is due
    the day it was promised."""
    if _WEEK_RE.search(phrase):  # a week is promised by its last working day
        day = _friday_of(day)
    if day < said_on and not _YEAR_RE.search(phrase) and not _WEEKDAY_RE.search(phrase):
        try:
            day = day.replace(year=day.year + 1)
        except ValueError:  # 29 February
            day = day.replace(year=day.year + 1, day=28)
    return max(day, said_on)


def due_date(sent: Span, ents: list[Span], said_on: datetime.date, start: int, end: int) -> datetime.date | None:
    """The deadline a date phrase in ``sent.text[start:end]`` (the promise's predicate) gives, if any."""
    text = sent.text[start:end]
    own = _own_phrase(text, said_on)
    if own is not None:
        return own
    hits, _ = sentence_dates(sent, ents, said_on)
    inside = [hit for hit in hits if start <= hit.start < end]
    # A deadline ("by the 12th") over any other date in the promise ("the Q1 forecast").
    hit = next((h for h in inside if h.role == "to"), inside[0] if inside else None)
    return _ahead(sent.text[hit.start : hit.end], hit.date, said_on) if hit else None


# A deadline named by something said before: "before the QBR", "by then", "ahead of the launch".
def earlier_date(sentences: list[Span], said_on: datetime.date) -> datetime.date | None:
    """The date the latest of ``sentences`` (said before the promise, oldest first) that gives one
    gives, read ahead of ``said_on``."""
    for sent in reversed(sentences):
        hits, _ = sentence_dates(sent, list(sent.ents), said_on)
        if hits:
            return _ahead(sent.text[hits[0].start : hits[0].end], hits[0].date, said_on)
    return None
