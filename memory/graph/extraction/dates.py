"""Dates in a sentence: quarters, relative dates resolved against the document's date, validity roles."""

from __future__ import annotations

import calendar
import datetime
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

import dateparser

from memory.graph.extraction.shapes import ExtractedValue
from memory.graph.extraction.values import _DURATION_KEYS, _context_key

if TYPE_CHECKING:
    from spacy.tokens import Span

_QUARTER_RE = re.compile(
    r"\b(?:(?:the\s+)?(?P<edge>end|start|beginning|close)\s+of\s+(?:the\s+)?)?(?P<q>Q[1-4])\b"
    r"(?:\s*(?:of\s+)?(?:FY\s?)?(?P<y>(?:19|20)\d\d))?",
    re.I,
)


_NUMBER_WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9}
_NUMBER_WORDS |= {"ten": 10, "eleven": 11, "twelve": 12}
_DURATION_RE = re.compile(
    rf"(?:the\s+)?(?:(?:next|last|past|first)\s+)?(?P<n>\d+(?:\.\d+)?|{'|'.join(_NUMBER_WORDS)})[\s-]+"
    r"(?:business\s+|working\s+|calendar\s+)?(?P<unit>day|week|month|year|quarter|hour|minute)s?",
    re.I,
)


_EDGE_RE = re.compile(r"^(?:the\s+)?(?P<edge>end|start|beginning|middle|mid|close|early|late)(?:\s*-\s*|\s+of\s+|\s+)")
_TO_RE = re.compile(r"\b(?:until|till|til|through|thru|by|ending|ends?|expires?|expiring|before|within)\s*$")
_FROM_RE = re.compile(r"\b(?:from|since|starting|starts?|as of|effective|on|beginning|begins?|commencing)\s*$")
_PREP_BEFORE_RE = re.compile(r"\b(?:on|by|until|till|from|since|before|after|in|at|through|of|as of|starting)\s*$")
_WEEKDAYS = "(?:mon|tues|wednes|thurs|fri|satur|sun)day"
_DAYISH_RE = re.compile(rf"\b(?:\d{{1,2}}(?:st|nd|rd|th)?|{_WEEKDAYS}|today|tomorrow|yesterday|tonight|week|day|ago)\b")
_MONTHS_RE = re.compile(r"\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\b")


@dataclass
class _DateHit:
    start: int  # offsets within the sentence text
    end: int
    date: datetime.date
    role: str  # "from", "to" or ""
    relative: bool  # depends on the document date: the statement gets the ISO date instead
    month: str = ""  # a whole month is rewritten as "January 2026", not as its first day


def _quarter(q: int, year: int, last: bool) -> datetime.date:
    month = 3 * q if last else 3 * q - 2
    return datetime.date(year, month, calendar.monthrange(year, month)[1] if last else 1)


def _role(prefix: str, phrase: str) -> str:
    prefix, phrase = prefix.lower(), phrase.lower()
    if _TO_RE.search(prefix) or re.match(r"(the\s+)?(end|close)\b", phrase):
        return "to"
    if _FROM_RE.search(prefix) or re.match(r"(the\s+)?(start|beginning)\b", phrase):
        return "from"
    return ""


def _snap(day: datetime.date, phrase: str, last: bool) -> datetime.date:
    # A month or a year without a day means the whole period: its first or last day.
    if _DAYISH_RE.search(phrase):
        return day
    if _MONTHS_RE.search(phrase) or "month" in phrase:
        return day.replace(day=calendar.monthrange(day.year, day.month)[1] if last else 1)
    if "year" in phrase or re.fullmatch(r"(fy\s?)?\d{4}", phrase):
        return datetime.date(day.year, 12, 31) if last else datetime.date(day.year, 1, 1)
    return day


@lru_cache(maxsize=4096)
def _dateparser(query: str, base: datetime.date, prefer: str) -> datetime.date | None:
    settings = {"RELATIVE_BASE": datetime.datetime.combine(base, datetime.time()), "PREFER_DATES_FROM": prefer}
    try:
        parsed = dateparser.parse(query, languages=["en"], settings=settings)
    except (ValueError, OverflowError):  # "in 99999999 days" overflows rather than failing to parse
        return None
    return parsed.date() if parsed else None


def _parse_date(phrase: str, base: datetime.date, role: str, past: bool) -> datetime.date | None:
    phrase = phrase.lower().strip()
    edge = _EDGE_RE.match(phrase)
    rest = phrase[edge.end() :] if edge else phrase
    last = edge["edge"] in ("end", "close", "late") if edge else role == "to"
    if re.fullmatch(r"(this\s+)?quarter", rest):
        return _quarter((base.month - 1) // 3 + 1, base.year, last)
    if re.fullmatch(r"(fy\s?)?(19|20)\d\d", rest):
        return _snap(datetime.date(int(rest[-4:]), 1, 1), rest, last)
    # "next Friday" is ahead; "left in December" in a March document is the December before.
    prefer = "future" if re.search(r"\b(next|coming|upcoming)\b", rest) else "past" if past else "current_period"
    query = re.sub(r"^(this|the)\s+(?=month|year)", "", rest.replace("coming ", "next ")) or "today"
    parsed = _dateparser(query, base, prefer)
    if parsed is None:
        return None
    day = _snap(parsed, rest, last)
    return day.replace(day=15) if edge and edge["edge"] in ("middle", "mid") else day


def _dates(
    sent: Span, ents: list[Span], base: datetime.date
) -> tuple[list[_DateHit], list[tuple[int, ExtractedValue]]]:
    text, hits, durations = sent.text, list[_DateHit](), list[tuple[int, ExtractedValue]]()
    past = any(t.tag_ == "VBD" for t in sent) and not any(t.tag_ == "MD" for t in sent)
    for m in _QUARTER_RE.finditer(text):  # spaCy reads "Q3" as a number; dateparser gets quarters wrong
        role = _role(text[: m.start()], m.group(0))
        day = _quarter(int(m["q"][1]), int(m["y"]) if m["y"] else base.year, role != "from")
        hits.append(_DateHit(m.start(), m.end(), day, role, not m["y"]))
    for ent in ents:
        start, end = ent.start_char - sent.start_char, ent.end_char - sent.start_char
        clock_only = ent.label_ == "TIME" and not _DAYISH_RE.search(ent.text.lower())  # "3pm" has no date
        if ent.label_ not in ("DATE", "TIME") or clock_only or any(h.start < end and start < h.end for h in hits):
            continue
        prefix, duration = text[:start].lower(), _DURATION_RE.fullmatch(ent.text.strip())
        after_in = re.search(r"\b(in|within)\s*$", prefix)
        # "30 days" is a length, not a date; so is "within 4 hours", too short to move a day.
        if duration and (not after_in or duration["unit"].lower() in ("hour", "minute")):
            n, unit = duration["n"].lower(), duration["unit"].lower() + "s"
            key = _context_key(sent, start, end, _DURATION_KEYS, "duration")
            durations.append(
                (start, ExtractedValue(key, number=float(_NUMBER_WORDS.get(n) or n), text=ent.text, unit=unit))
            )
            continue
        role = _role(prefix, ent.text)
        start = after_in.start() if duration and after_in else start  # "in two weeks" is one date phrase
        when = _parse_date(("in " if duration else "") + ent.text, base, role, past)
        if when is not None:
            hits.append(_DateHit(start, end, when, role, not re.search(r"\b\d{4}\b", ent.text)))
            if (
                _MONTHS_RE.search(ent.text.lower())
                and not _DAYISH_RE.search(ent.text.lower())
                and not _EDGE_RE.match(ent.text.lower())
            ):
                hits[-1].month = f"{ent.text} {when.year}"  # "in January" reads better as "in January 2026"
    return sorted(hits, key=lambda h: h.start), durations


def _resolve(text: str, hits: list[_DateHit]) -> str:
    """The sentence with each relative date phrase replaced by its ISO date."""
    for hit in sorted(hits, key=lambda h: -h.start):
        if hit.relative:
            before = text[: hit.start].lower()
            prep = "" if not before.strip() or _PREP_BEFORE_RE.search(before) else "by " if hit.role == "to" else "on "
            text = text[: hit.start] + (hit.month or prep + hit.date.isoformat()) + text[hit.end :]
    return " ".join(text.lstrip("-*•,;: \t\n").split())
