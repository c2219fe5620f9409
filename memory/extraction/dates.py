"""Dates in a sentence, read into fields: the sentence itself is never rewritten.

Each time phrase resolves against the document's own day (its base). A week, a month or a quarter is
its first day; a deadline ("by Friday", "by end of next week") is the period's last working day and
lies ahead; a day or month without a year is the nearest sensible one (a past-tense sentence looks
back, any other ahead). Recurring or habitual times ("every Monday at 10:00", "on the 20th of each
month", "on Tuesdays") and clock times alone ("at 10:00") are no date at all: they stay words.
"""

from __future__ import annotations

import calendar
import datetime
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

import dateparser

from memory.extraction.shapes import ExtractedValue
from memory.extraction.values import _DURATION_KEYS, _context_key

if TYPE_CHECKING:
    from spacy.tokens import Span

_NUMBER_WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9}
_NUMBER_WORDS |= {"ten": 10, "eleven": 11, "twelve": 12, "a": 1, "an": 1}
_ORDINAL_WORDS = "first second third fourth fifth sixth seventh eighth ninth tenth eleventh twelfth thirteenth"
_ORDINAL_WORDS += " fourteenth fifteenth sixteenth seventeenth eighteenth nineteenth twentieth"
_ORDINALS = {w: n for n, w in enumerate(_ORDINAL_WORDS.split(), 1)}
_ORDINALS |= {f"twenty-{w}": 20 + n for w, n in list(_ORDINALS.items())[:9]}
_ORDINALS |= {f"twenty {w}": 20 + n for w, n in list(_ORDINALS.items())[:9]}
_ORDINALS |= {"thirtieth": 30, "thirty-first": 31, "thirty first": 31}
_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_MONTHS = tuple(calendar.month_name[1:])
_WD = r"(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)"
_WD_SHORT = r"(?:mon|tue|tues|wed|thu|thur|thurs|fri|sat|sun)\.?"
_MONTH = r"(?:january|february|march|april|may|june|july|august|september|october|november|december"
_MONTH += r"|(?:jan|feb|mar|apr|jun|jul|aug|sept|sep|oct|nov|dec)\b\.?)"
_DAYNUM = r"(?:\d{1,2}(?:st|nd|rd|th)?|" + "|".join(sorted(_ORDINALS, key=len, reverse=True)) + ")"
_YEAR = r"(?:19|20)\d\d"
_CLOCK = r"(?:\d{1,2}(?:[:.]\d\d)?\s*(?:am|pm|h)?|noon|midnight|half past \w+)"
_PERIOD = r"(?:week|month|quarter|year)"

# Habits and schedules: no one date, so nothing inside them is read as one.
_RECURRING_RE = re.compile(
    rf"\b(?:every|each)\s+(?:other\s+|second\s+|third\s+|single\s+)?(?:{_WD}|day|week|month|quarter|year|morning"
    rf"|afternoon|evening|night|weekday|working\s+day|business\s+day|{_MONTH})s?\b"
    rf"|\b(?:on\s+|by\s+)?(?:the\s+)?{_DAYNUM}(?:\s+working|\s+business)?(?:\s+day)?\s+of\s+(?:each|every|the)\s+month\b"
    rf"|\b{_WD}s(?:\s*(?:,|and|or|&)\s*{_WD}s)*\b|\b(?:on\s+)?(?:weekdays|weekends|workdays)\b"
    r"|\b(?:daily|weekly|monthly|fortnightly|quarterly|annually|yearly|biweekly|bi-weekly|nightly|hourly)\b",
    re.I,
)
# fmt: off
_PATTERNS = [
    ("iso", rf"\b(?P<y>{_YEAR})-(?P<m>\d\d)-(?P<d>\d\d)\b"),
    ("slash", rf"\b(?P<d>\d{{1,2}})/(?P<m>\d{{1,2}})/(?P<y>{_YEAR})\b"),
    ("range", rf"\bfrom\s+(?:the\s+)?(?P<d1>{_DAYNUM})\s*(?:to|-|–|until|till|through)\s*(?:the\s+)?(?P<d>{_DAYNUM})"
     rf"(?:\s+of)?\s+(?P<m>{_MONTH})(?:,?\s+(?P<y>{_YEAR}))?"),
    ("daymonth", rf"\b(?:{_WD}|{_WD_SHORT})?,?\s*(?:the\s+)?(?P<d>{_DAYNUM})(?:\s+of)?\s+(?P<m>{_MONTH})"
     rf"(?:,?\s+(?P<y>{_YEAR})\b|(?P<next>\s+next\s+year))?"),
    ("monthday", rf"\b(?P<m>{_MONTH})\s+(?P<d>\d{{1,2}})(?:st|nd|rd|th)?\b(?:,?\s+(?P<y>{_YEAR})\b)?"),
    ("edge", rf"\b(?:the\s+)?(?P<edge>end|start|beginning|close|middle)\s+of\s+(?:the\s+)?(?P<which>this|next|last|"
     rf"coming)?\s*(?P<period>{_PERIOD}|(?P<m>{_MONTH})(?:\s+(?P<y>{_YEAR}))?)\b"),
    ("quarter", rf"(?:\b(?:the\s+)?(?P<edge>end|start|beginning|close)\s+of\s+(?:the\s+)?)?\b(?P<q>Q[1-4])\b"
     rf"(?:\s*(?:of\s+)?(?:FY\s?)?(?P<y>{_YEAR}))?"),
    ("period", rf"\b(?P<which>last|this|next|coming|past)\s+(?P<period>{_PERIOD})\b"),
    ("month", rf"\b(?P<m>january|february|march|april|may|june|july|august|september|october|november|december)"
     rf"(?:\s+(?P<y>{_YEAR}))?\b"),
    ("year", rf"\b(?:in|during|for|of|since|until|by|from)\s+(?:FY\s?)?(?P<y>{_YEAR})\b"),
    ("day", r"\b(?P<word>today|tonight|tomorrow|yesterday|this\s+(?:morning|afternoon|evening))\b"),
    ("shift", rf"\b(?:in|within)\s+(?P<n>\d+|{'|'.join(_NUMBER_WORDS)})\s+(?P<unit>day|week|month)s?\b"
     rf"|\b(?P<n2>\d+|{'|'.join(_NUMBER_WORDS)})\s+(?P<unit2>day|week|month)s?\s+ago\b"),
    ("weekday", rf"\b(?:(?P<which>last|this|next|coming)\s+)?(?P<wd>{_WD})\b"),
    ("nth", rf"\bthe\s+(?P<d>\d{{1,2}}(?:st|nd|rd|th)|{'|'.join(sorted(_ORDINALS, key=len, reverse=True))})"
     r"(?=\s*(?:[.,;:!?)]|$|(?:in|at|and|or|so|for|to|then|is|was)\b))"),
]
# fmt: on
_PHRASE_RES = [(name, re.compile(p, re.I)) for name, p in _PATTERNS]
_TO_RE = re.compile(r"\b(?:until|till|til|through|thru|by|ending|ends?|expires?|expiring|before|within|due)\s*$")
_FROM_RE = re.compile(r"\b(?:from|since|starting|starts?|as of|effective|on|beginning|begins?|commencing)\s*$")
_ON_DAY_RE = re.compile(r"\b(?:on|by|until|till|from|since|before|after|for)\s+$", re.I)
_SPAN_END_RE = re.compile(r"(?:\bto|-|–)\s*$", re.I)
_SINCE_RE = re.compile(r"\bsince\s+$", re.I)
_AHEAD_RE = re.compile(r"\b(?:for|until|till|before|due)\s*$", re.I)
_DURATION_RE = re.compile(
    rf"(?:the\s+)?(?:(?:next|last|past|first)\s+)?(?P<n>\d+(?:\.\d+)?|{'|'.join(_NUMBER_WORDS)})[\s-]+"
    r"(?:business\s+|working\s+|calendar\s+)?(?P<unit>day|week|month|year|quarter|hour|minute)s?",
    re.I,
)
_CLOCK_ONLY_RE = re.compile(rf"^(?:(?:at|after|before|around|from|until|by)\s+)?{_CLOCK}(?:\s*(?:cet|utc|gmt|\w?st))?$")
# What a date the patterns do not know must hold: a month, a weekday, a year or a day/month pair; so
# "3+", "L2", "v1.2", "24/7 support" and amounts are no dates.
_DATEISH_RE = re.compile(
    rf"\b{_MONTH}|\b{_WD}\b|\b{_YEAR}\b|\b\d{{1,2}}[/.]\d{{1,2}}[/.]\d{{2,4}}\b|\b\d{{1,2}}(?:st|nd|rd|th)\b", re.I
)
# A day or month named in words, kept as words where its year is not known.
NAMED_DAY = re.compile(rf"\b{_MONTH}|\bthe\s+\d{{1,2}}(?:st|nd|rd|th)\b", re.I)


@dataclass
class _DateHit:
    start: int  # offsets within the sentence text
    end: int
    date: datetime.date
    role: str  # "from", "to" or ""
    relative: bool  # resolved against the document's date (no year of its own)


def _role(prefix: str, phrase: str) -> str:
    prefix, phrase = prefix.lower(), phrase.lower()
    if _TO_RE.search(prefix) or re.match(r"(the\s+)?(end|close)\b", phrase):
        return "to"
    if _FROM_RE.search(prefix) or re.match(r"(the\s+)?(start|beginning)\b", phrase):
        return "from"
    return ""


def _number(word: str) -> int:
    word = word.lower()
    return _ORDINALS.get(word) or _NUMBER_WORDS.get(word) or int(re.sub(r"\D", "", word) or 0)


def _month(word: str) -> int:
    return next(i for i, name in enumerate(_MONTHS, 1) if name.lower().startswith(word.lower().rstrip(".")[:3]))


def _monday(day: datetime.date) -> datetime.date:
    return day - datetime.timedelta(days=day.weekday())


def _month_end(year: int, month: int) -> datetime.date:
    return datetime.date(year, month, calendar.monthrange(year, month)[1])


def _add_months(day: datetime.date, n: int) -> datetime.date:
    year, month = divmod(day.month - 1 + n, 12)
    year += day.year
    return datetime.date(year, month + 1, min(day.day, calendar.monthrange(year, month + 1)[1]))


def _day_of(year: int, month: int, day: int) -> datetime.date | None:
    try:
        return datetime.date(year, month, day)
    except ValueError:
        return None


def _nearest_year(month: int, day: int, base: datetime.date, past: bool) -> datetime.date | None:
    """A day and month without a year: the one just behind (past tense) or ahead of the base."""
    when = _day_of(base.year, month, day)
    if when is None:
        return None
    if past and when > base + datetime.timedelta(days=7):
        return _day_of(base.year - 1, month, day)
    if not past and when < base - datetime.timedelta(days=14):
        return _day_of(base.year + 1, month, day)
    return when


def _period(period: str, which: str, base: datetime.date, last: bool) -> datetime.date:
    """This, next or last week, month, quarter or year: its first day, or its last (working) day."""
    step = {"last": -1, "past": -1, "next": 1, "coming": 1}.get(which, 0)
    if period == "week":
        monday = _monday(base) + datetime.timedelta(weeks=step)
        return monday + datetime.timedelta(days=4) if last else monday
    if period == "month":
        first = _add_months(base.replace(day=1), step)
        return _month_end(first.year, first.month) if last else first
    if period == "quarter":
        first = _add_months(datetime.date(base.year, 3 * ((base.month - 1) // 3) + 1, 1), 3 * step)
        end = _add_months(first, 2)
        return _month_end(end.year, end.month) if last else first
    year = base.year + step
    return datetime.date(year, 12, 31) if last else datetime.date(year, 1, 1)


def _weekday(wanted: int, which: str, base: datetime.date, past: bool) -> datetime.date:
    if which == "this":
        return _monday(base) + datetime.timedelta(days=wanted)
    if which == "last" or (past and which not in ("next", "coming")):
        return base - datetime.timedelta(days=(base.weekday() - wanted) % 7 or 7)
    return base + datetime.timedelta(days=(wanted - base.weekday()) % 7 or 7)


def _read(kind: str, m: re.Match[str], base: datetime.date, past: bool, last: bool) -> datetime.date | None:
    g = m.groupdict()
    if kind in ("iso", "slash"):
        return _day_of(int(g["y"]), int(g["m"]), int(g["d"]))
    if kind in ("daymonth", "monthday", "range"):
        month, day = _month(g["m"]), _number(g["d"])
        if g.get("y"):
            return _day_of(int(g["y"]), month, day)
        if g.get("next"):
            return _day_of(base.year + 1, month, day)
        return _nearest_year(month, day, base, past)
    if kind == "month" or (kind == "edge" and g["m"]):
        month = _month(g["m"])
        if g["y"]:
            year = int(g["y"])
        elif past:
            year = base.year if month <= base.month else base.year - 1
        else:
            year = base.year if month >= base.month else base.year + 1
        if kind == "edge" and g["edge"].lower() == "middle":
            return datetime.date(year, month, 15)
        return _month_end(year, month) if last else datetime.date(year, month, 1)
    if kind in ("edge", "period"):
        which = (g["which"] or "this").lower()
        return _period(g["period"].lower(), which, base, last)
    if kind == "quarter":
        q, now = int(g["q"][1]), (base.month - 1) // 3 + 1
        year = int(g["y"]) if g["y"] else base.year + (-1 if past and q > now else 1 if not past and q < now else 0)
        return _month_end(year, 3 * q) if last else datetime.date(year, 3 * q - 2, 1)
    if kind == "year":
        return datetime.date(int(g["y"]), 12, 31) if last else datetime.date(int(g["y"]), 1, 1)
    if kind == "day":
        word = g["word"].lower()
        return base + datetime.timedelta(days={"tomorrow": 1, "yesterday": -1}.get(word, 0))
    if kind == "shift":
        n = _number(g["n"] or g["n2"]) * (1 if g["n"] else -1)
        unit = (g["unit"] or g["unit2"]).lower()
        if unit == "month":
            return _add_months(base, n)
        return base + datetime.timedelta(days=n * (7 if unit == "week" else 1))
    if kind == "weekday":
        return _weekday(_WEEKDAYS.index(g["wd"].lower()), (g["which"] or "").lower(), base, past)
    day = _number(g["d"])  # "the 11th": this month's, or the next (or last) month's
    when = _day_of(base.year, base.month, day)
    if when is None or (past and when > base):
        when = _day_of(*_add_months(base.replace(day=1), -1 if past else 1).timetuple()[:2], day)
    elif not past and when < base:
        when = _day_of(*_add_months(base.replace(day=1), 1).timetuple()[:2], day)
    return when


# A rule that comes back every year: its days and months are no one year's.
_YEARLY_RE = re.compile(
    rf"\b(?:every|each)\s+(?:other\s+)?(?:year|{_MONTH}|summer|winter|spring|autumn|fall|new\s+year)s?\b"
    r"|\b(?:annually|yearly|every\s+calendar\s+year|each\s+calendar\s+year)\b",
    re.I,
)
# Calendar days and months named without a year: what a rule or an undated page leaves as words.
_CALENDAR = frozenset({"daymonth", "monthday", "range", "month", "nth", "edge"})


def _phrases(
    text: str, base: datetime.date, past_at: Callable[[int, int], bool], *, undated: bool = False
) -> tuple[list[_DateHit], list[tuple[int, int]]]:
    """Date phrases the patterns read, and the spans of habits (no date, nothing read inside them).

    A day or month without a year stays words, a span of its own that nothing reads as a date, in a
    sentence that states a rule ("4-day weeks from May 1 through August 31 every year") and, with
    ``undated``, in a document that says nowhere when it was written ("pay rises on January 1st"):
    its year is not known, and the next one after the day of saving is a guess."""
    taken = [(m.start(), m.end()) for m in _RECURRING_RE.finditer(text)]
    blocked = list(taken)
    partial_stays = undated or bool(_YEARLY_RE.search(text))
    hits: list[_DateHit] = []
    for kind, pattern in _PHRASE_RES:
        for m in pattern.finditer(text):
            start, end = m.start(), m.end()
            while start < end and (text[start].isspace() or text[start] == ","):
                start += 1
            if start >= end or any(s < end and start < e for s, e in taken):
                continue
            if (kind == "month" and m["m"] == "may") or (kind == "weekday" and blocked and not m["which"]):
                continue  # "may" the verb; "Friday drinks ... every week" is a habit's day
            phrase, prefix = text[start:end], text[:start]
            role = "from" if kind == "range" else _role(prefix, phrase)
            if not role and _SPAN_END_RE.search(prefix) and any(h.role == "from" for h in hits):
                role = "to"  # "from 24 December to 1 January"; "moves to Saturday" is no end
            edge = m["edge"].lower() if "edge" in m.groupdict() and m["edge"] else ""
            last = edge in ("end", "close") or (role == "to" and kind != "weekday")
            # A deadline or a plan ("by Monday", "booked for 15 January") lies ahead whatever the tense.
            past = role != "to" and not _AHEAD_RE.search(prefix) and past_at(start, end)
            past = past or bool(_SINCE_RE.search(prefix))  # "has led sales since March" looks back
            if kind == "nth" and not m["d"][0].isdigit() and not _ON_DAY_RE.search(prefix):
                continue  # "the first to reply" is no day; "on the tenth" is
            try:
                when = _read(kind, m, base, past, last)
            except (OverflowError, ValueError):  # "in 99999999 days" leaves the calendar
                continue
            if when is None:
                continue
            relative = kind not in ("iso", "slash", "year") and not m.groupdict().get("y")
            if relative and partial_stays and kind in _CALENDAR and (kind != "edge" or m["m"]):
                blocked.append((start, end))
                taken.append((start, end))
                continue
            taken.append((start, end))
            if kind == "range":
                first = _day_of(when.year, when.month, _number(m["d1"]))
                if first is not None:
                    hits.append(_DateHit(start, end, first, "from", relative))
                role = "to"
            hits.append(_DateHit(start, end, when, role, relative))
    _order_range(hits)
    return hits, blocked


def _order_range(hits: list[_DateHit]) -> None:
    """An end read before its start ("from 24 December to 1 January") is the next year's."""
    start = next((h for h in hits if h.role == "from"), None)
    for hit in hits:
        if start is not None and hit.role == "to" and hit.relative and hit.date < start.date:
            hit.date = _day_of(hit.date.year + 1, hit.date.month, hit.date.day) or hit.date


@lru_cache(maxsize=4096)
def _dateparser(query: str, base: datetime.date, prefer: str) -> datetime.date | None:
    settings = {"RELATIVE_BASE": datetime.datetime.combine(base, datetime.time()), "PREFER_DATES_FROM": prefer}
    try:
        parsed = dateparser.parse(query, languages=["en"], settings=settings)
    except (ValueError, OverflowError):  # "in 99999999 days" overflows rather than failing to parse
        return None
    return parsed.date() if parsed else None


def _past_at(sent: Span) -> Callable[[int, int], bool]:
    """Whether the verb a phrase at sentence offsets ``start:end`` hangs on is in the past tense."""

    def past(start: int, end: int) -> bool:
        inside = [t for t in sent if start <= t.idx - sent.start_char < end]
        token = inside[0] if inside else sent.root
        while token.pos_ not in ("VERB", "AUX") and token.head.i != token.i:
            token = token.head
        if token.pos_ not in ("VERB", "AUX"):
            return False
        children = list(token.children)
        if token.tag_ in ("VBP", "VBZ") and token.head.i != token.i and not any("subj" in c.dep_ for c in children):
            token, children = token.head, list(token.head.children)  # a noun misread as a verb ("16 upgrade")
        if any(c.tag_ == "MD" for c in children):
            return False
        return token.tag_ == "VBD" or (token.tag_ == "VBN" and any(c.tag_ == "VBD" for c in children))

    return past


def sentence_dates(
    sent: Span, ents: list[Span], base: datetime.date, *, undated: bool = False
) -> tuple[list[_DateHit], list[tuple[int, ExtractedValue]]]:
    """Dates and durations of one sentence; ``undated``: its document says nowhere when it was written
    (``base`` is the day it was saved), so a day or month without a year is left as written."""
    text, durations = sent.text, list[tuple[int, ExtractedValue]]()
    past_at = _past_at(sent)
    hits, blocked = _phrases(text, base, past_at, undated=undated)
    covered = blocked + [(h.start, h.end) for h in hits]
    for ent in ents:
        start, end = ent.start_char - sent.start_char, ent.end_char - sent.start_char
        if ent.label_ not in ("DATE", "TIME") or any(s < end and start < e for s, e in covered):
            continue
        prefix, duration = text[:start].lower(), _DURATION_RE.fullmatch(ent.text.strip())
        if duration:  # "30 days", "within 4 hours": a length, not a date ("in two weeks" was read above)
            n, unit = duration["n"].lower(), duration["unit"].lower() + "s"
            key = _context_key(sent, start, end, _DURATION_KEYS, "duration")
            durations.append(
                (start, ExtractedValue(key, number=float(_NUMBER_WORDS.get(n) or n), text=ent.text, unit=unit))
            )
            continue
        # What the patterns do not know ("3rd of Dec '25"), if it names a day at all; never a clock time.
        habit = blocked and not re.search(r"\d", ent.text)  # "Friday drinks ... every week"
        clock = ent.label_ == "TIME" or _CLOCK_ONLY_RE.match(ent.text.strip().lower())
        if clock or habit or not _DATEISH_RE.search(ent.text):
            continue
        when = _dateparser(ent.text, base, "past" if past_at(start, end) else "future")
        if when is not None:
            hits.append(_DateHit(start, end, when, _role(prefix, ent.text), not re.search(r"\b\d{4}\b", ent.text)))
    return sorted(hits, key=lambda h: h.start), durations


def _clean(text: str) -> str:
    """The sentence as written: whitespace made single and a leading bullet marker dropped."""
    return " ".join(text.lstrip("-*•,;: \t\n").split())


# A deadline named by something said before: "before the QBR", "by then", "in time for the Launch".
LATER_EVENT = re.compile(
    r"\b(?:before|by|ahead of|in time for)\s+(?:(?P<then>then|that date|that day)\b|the\s+(?P<event>[A-Z][\w-]+))"
)
