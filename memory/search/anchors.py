"""A time a question gives by an event: "before the launch", "since Priya's trip", "after the
outage", or by a date on one side of it: "before May 2025", "since last week".

``anchor`` reads which side and what the question anchors it to. ``anchored_window`` gives the
days on that side as a window for search's "side" arm: a date is read as ``when.window`` reads
it; an event is dated by the passages the caller may read that best match its words (keyword
search, passages with a said-at time only). "Before" runs to the end of the best match's day;
"after" and "since" start from the day of the earliest of the best three, since the best match
is often a look back weeks later, which would start the side too late (measured:
docs/benchmarks-log.md, "Before or after an event"). Nothing a caller cannot read dates an event.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Literal

from django.db import connections

from brain.infra.replicas import read_alias
from memory.access import Clause
from memory.extraction.lines import word_set
from memory.index.candidates import keyword_candidates
from memory.search.when import MONTH_NAMES, Window, window

Side = Literal["before", "after", "since"]
EVENT_CANDIDATES = 12  # keyword matches looked through for the best ones with a time
BEFORE_MATCHES, AFTER_MATCHES = 1, 3  # "before": its best match; "after": the earliest of its best three
EVENT_WORDS = 5
_SIDES: dict[str, Side] = {
    "before": "before",
    "prior to": "before",
    "ahead of": "before",
    "until": "before",
    "till": "before",
    "leading up to": "before",
    "in the run-up to": "before",
    "in the lead-up to": "before",
    "after": "after",
    "following": "after",
    "since": "since",
}
_PREPOSITION = "|".join(re.escape(p).replace(r"\ ", r"\s+") for p in sorted(_SIDES, key=len, reverse=True))
_ANCHOR = re.compile(rf"(?<![\w'’-])(?i:{_PREPOSITION})\s+(?P<what>[^?.!,;:()\"]+)")
# A named event starts with a determiner, a possessive or a verb in -ing ("the launch", "her trip",
# "Priya's offsite", "moving to Leeds"), or is a holiday ("Halloween", "Mother's Day").
_OWNER = r"(?:(?i:the|our|their|his|her|my|your|its|this|that)|[A-Z][\w’'-]*['’]s?)"
_EVENT = re.compile(rf"^(?:{_OWNER}\s+|(?=[a-z]+ing\s+\S))(?P<words>.+)$")
_HOLIDAY = re.compile(
    r"^(?:christmas(?: eve| day)?|easter|halloween|thanksgiving|hanukkah|diwali|ramadan|eid|passover|"
    r"(?:lunar |chinese )?new year(?:['’]s(?: eve| day)?)?|black friday|boxing day|independence day|"
    r"(?:labou?r|memorial|valentine['’]s|mother['’]s|father['’]s|st\.? patrick['’]s) day)\b",
    re.I,
)
# A date right after the preposition: "before May 2025", "since 8 May", "after last week".
_TIME_FIRST = re.compile(
    rf"^(?:(?:(?:early|late|mid)[\s-]+)?(?:{MONTH_NAMES})\b\.?(?:\s+\d{{1,2}}(?:st|nd|rd|th)?\b)?(?:,?\s+(?:of\s+)?\d{{4}})?"
    rf"|(?:the\s+)?\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?(?:{MONTH_NAMES})\b\.?(?:,?\s+\d{{4}})?"
    r"|\d{4}-\d{2}-\d{2}|(?:19|20)\d{2}\b|yesterday|today|(?:last|this|past)\s+(?:week|month|year|weekend)"
    r"|(?:the\s+)?(?:summer|winter|spring|autumn|fall)(?:\s+of\s+\d{4})?)(?![\w-])",
    re.I,
)
_WORD = re.compile(r"[\w'’-]+")
# Words that end the event's name: "before the launch when Tom said…" names "launch".
_ENDS = word_set(
    """
    and or but so when while whenever what which who whom whose where why how did does do was
    were is are has have had will would could should can might must i we you he she they it
    about regarding concerning
    """
)
# Words that name a time or point back rather than an event: "before the weekend", "after the
# last one" name nothing a message dates.
_NOT_EVENTS = word_set(
    """
    day days week weeks weekend month months year years morning afternoon evening night today
    tonight tomorrow yesterday holidays holiday break summer winter spring autumn fall moment
    time end start beginning meeting call chat conversation last first next one ones other
    others same rest
    """
)


@dataclass(frozen=True)
class Anchor:
    """One side of a moment: the days before it, or after (or since) it. ``event`` names the
    moment by what happened ("launch", "BigCo pilot"); ``time`` by a date the question gives;
    neither for a date we cannot place ("before June"), which gives no window."""

    side: Side
    event: str = ""
    time: Window | None = None


def anchor(question: str, today: date) -> Anchor | None:
    """The first "before/after/since …" in the question that names a date or an event, or None."""
    for match in _ANCHOR.finditer(question):
        side = _SIDES[" ".join(match.group(0)[: match.start("what") - match.start()].lower().split())]
        what = match["what"].strip()
        written = _TIME_FIRST.match(what)
        if written and (time := window(f"in {written[0]}", today)) is not None:
            # "before June": which June is not ours to guess, and June itself is the wrong side
            return Anchor(side) if time.yearless else Anchor(side, time=time)
        if event := _event_words(what):
            return Anchor(side, event=event)
    return None


def _event_words(what: str) -> str:
    if holiday := _HOLIDAY.match(what):
        return holiday[0]
    named = _EVENT.match(what)
    if named is None:
        return ""
    words: list[str] = []
    for word in _WORD.findall(named["words"]):
        if word.lower() in _ENDS or len(words) == EVENT_WORDS:
            break
        words.append(word)
    if not words or all(word.lower() in _NOT_EVENTS for word in words):
        return ""
    return " ".join(words)


def anchored_window(found: Anchor, where: Clause) -> Window | None:
    """The days on the anchor's side of its moment; None when its event is in no passage the
    caller may read with a time."""
    if found.time is not None:  # "before May 2025": up to May; "after May 2025": from June; "since": from May
        first, last = found.time.start, found.time.end
        if found.side == "before":
            return Window(date.min, first)
        return Window(last if found.side == "after" else first, date.max)
    if not found.event:
        return None
    before = found.side == "before"
    moments = event_moments(found.event, where, BEFORE_MATCHES if before else AFTER_MATCHES)
    if not moments:
        return None
    if before:  # up to the end of the day: what was said that day may still be before it
        return Window(date.min, max(moments).date() + timedelta(days=1))
    return Window(min(moments).date(), date.max)


def event_moments(event: str, where: Clause, count: int) -> list[datetime]:
    """When the passages that best match the event's words were said, best first: at most
    ``count`` of those the caller may read that have a time."""
    ranked = [row_id for row_id, _ in keyword_candidates(event, where, EVENT_CANDIDATES)]
    if not ranked:
        return []
    with connections[read_alias()].cursor() as cursor:
        cursor.execute(
            "SELECT c.id, c.said_at FROM memory_chunk c WHERE c.id = ANY(%s) AND c.said_at IS NOT NULL",
            [ranked],
        )
        said = dict(cursor.fetchall())
    return [said[row_id] for row_id in ranked if row_id in said][:count]
