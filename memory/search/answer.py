"""The answer card: for a question, the line of the evidence that answers it, where it comes from
and as of when, and the sources that say otherwise.

It is extractive: every word of the answer is a source's. The passages a search kept (cut at the
relevance floor) are read unit by unit (a sentence, a list line, or a table row said with its
header); the unit that holds most of the question's telling words and, where the question asks
for a kind of value ("how much", "when", "who", "how many", "how long"), a value of that kind, is
the answer. Other units that hold the same words with a different value of that kind are the
sources that disagree, each with its date, whichever is later. Nothing left after the floor is
said plainly: nothing answers.

The search page and ``ask_company_memory`` both build their card here from the same search, so
they never disagree.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal, Protocol

from memory.extraction.lines import word_set
from memory.search.snippets import query_terms, units

Asked = Literal["money", "count", "date", "duration", "person", "place", "any"]
Status = Literal["answered", "disputed", "closest", "nothing"]

READ = 5  # passages (the best first) whose units the card reads
LINE_CHARS = 160  # the answer line: the value and the words that qualify it, or the unit, cut between words
UNIT_CHARS = 400  # a unit longer than this is shown cut between words
# The share of the question's words (each weighted by how few units hold it) the answering unit
# must hold for the card to claim it answers (measured on the mixed set and the off-topic
# questions: docs/benchmarks.md, "Answer card").
COVERED = 0.3
# A unit of another source is about the same thing as the answer when it holds this share of
# what the answer's unit holds of the question (by weight).
SAME_THING = 0.8

# What a question asks for, by its first words or the words it holds; the first that matches wins.
_ASKS: tuple[tuple[Asked, re.Pattern[str]], ...] = (
    ("money", re.compile(r"\b(?:how much|costs?|price[ds]?|pricing|budget|fees?|salary|pay|paid|spend)\b", re.I)),
    ("duration", re.compile(r"\bhow long\b|\bfor how many (?:days|weeks|months|years|hours|minutes)\b", re.I)),
    ("count", re.compile(r"\bhow many\b|\bnumber of\b|\bhow often\b", re.I)),
    ("date", re.compile(r"\b(?:when|(?:what|which) (?:date|day|time|month|year)|deadline|by what)\b", re.I)),
    ("person", re.compile(r"\b(?:who|whom|whose)\b|\bwhich (?:person|member|engineer|manager)\b", re.I)),
    ("place", re.compile(r"\bwhere\b|\bwhich (?:city|office|country|room|venue)\b", re.I)),
)
_MONTHS = (
    "jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|jun(?:e)?|jul(?:y)?|aug(?:ust)?|"
    "sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?"
)
_MONTH = re.compile(rf"\b(?:{_MONTHS})\b")
_DAYS = "monday|tuesday|wednesday|thursday|friday|saturday|sunday|mon|tue|wed|thu|fri|sat|sun"
_NUMBER = r"\d{1,3}(?:[,.]\d{3})+(?:[.,]\d+)?|\d+(?:[.,]\d+)?"
_VALUES: dict[Asked, re.Pattern[str]] = {
    "money": re.compile(
        rf"(?:US\$|[$€£¥]|\b(?:USD|EUR|GBP|CHF|JPY|CAD|AUD)\s?)\s?(?:{_NUMBER})(?:\s?(?:k|m|bn|million|thousand|billion)\b)?"
        rf"|\b(?:{_NUMBER})(?:\s?(?:k|m|bn|million|thousand|billion))?\s?(?:USD|EUR|GBP|CHF|JPY|CAD|AUD|dollars?|euros?|pounds?)\b",
        re.I,
    ),
    "duration": re.compile(
        rf"\b(?:{_NUMBER}|a|an|one|two|three|four|five|six|seven|eight|nine|ten|twelve|a few)[\s-]"
        r"(?:minutes?|mins?|hours?|hrs?|days?|weeks?|months?|years?|quarters?|sprints?)\b",
        re.I,
    ),
    "count": re.compile(
        rf"\b(?:{_NUMBER})\b|\b(?:one|two|three|four|five|six|seven|eight|nine|ten|twelve|twenty|once|twice)\b", re.I
    ),
    "date": re.compile(
        rf"\b\d{{4}}-\d\d-\d\d\b|\b\d{{1,2}}/\d{{1,2}}(?:/\d{{2,4}})?\b"
        rf"|\b(?:{_DAYS})\b\.?(?:,?\s+(?:the\s+)?\d{{1,2}}(?:st|nd|rd|th)?)?"
        rf"|\b\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?(?:{_MONTHS})\b\.?(?:,?\s+\d{{4}})?"
        rf"|\b(?:{_MONTHS})\b\.?\s*\d{{1,2}}(?:st|nd|rd|th)?\b(?:,?\s+\d{{4}})?"
        rf"|\b(?:{_MONTHS})\b\.?\s+\d{{4}}\b|\bQ[1-4](?:\s+\d{{4}})?\b"
        r"|\b\d{1,2}(?::\d\d)?\s?(?:am|pm)\b|\b\d{1,2}:\d\d\b"
        r"|\b(?:today|tomorrow|yesterday|tonight|next|last|this|end of)\s+"
        r"(?:week|month|quarter|year|sprint|" + _DAYS + r")\b",
        re.I,
    ),
    # A name: two or more capitalised words, or one after a word that introduces a person.
    "person": re.compile(
        r"(?P<v>\b[A-Z][a-z'’-]+(?:\s+(?:[A-Z][a-z'’-]+|[A-Z]\.))+)"
        r"|\b(?:by|to|is|was|with|from|ask)\s+(?P<one>[A-Z][a-z'’-]+)\b"
    ),
    "place": re.compile(r"\b(?:in|at|to|from|near)\s+(?:the\s+)?(?P<v>[A-Z][\w'’-]+(?:\s+[A-Z][\w'’-]+)*)"),
}
# The words that say what a value is, after it: "29 EUR per seat a month", "3pm Pacific".
_QUALIFIER = re.compile(
    r"^(?:\s*(?:per|a|an|each|every|/)\s+\w+|\s+(?:Pacific|Eastern|Central|UTC|GMT|CET|CEST|PST|PDT|EST|EDT|BST))+",
    re.I,
)
_NOT_WORD = re.compile(r"\W+")
# Words that say how a question asks, not what about: they tell no unit from another.
_ASKING = word_set("much many long often tell know anyone someone remind")


class Passage(Protocol):
    """What the card reads of a search hit."""

    @property
    def chunk_id(self) -> int: ...

    @property
    def document_id(self) -> int: ...

    @property
    def title(self) -> str: ...

    @property
    def heading(self) -> str: ...

    @property
    def text(self) -> str: ...

    @property
    def speaker(self) -> str: ...


@dataclass(frozen=True)
class Statement:
    """One unit of a source that answers: the value it gives (may be ""), the unit, and its source."""

    value: str
    sentence: str
    chunk_id: int
    document_id: int
    title: str
    speaker: str
    when: datetime | None


@dataclass(frozen=True)
class Card:
    status: Status
    asked: Asked
    line: str = ""  # the answer in one line: the value and its qualifiers, else the unit
    answer: Statement | None = None
    others: list[Statement] = field(default_factory=list)  # sources giving another value, by date

    @property
    def later(self) -> list[Statement]:
        """The sources that disagree and are dated after the answer's."""
        if self.answer is None or self.answer.when is None:
            return []
        mine = self.answer.when
        return [s for s in self.others if s.when is not None and s.when > mine]


@dataclass(frozen=True)
class _Unit:
    text: str
    rank: int  # the place of its passage in the search's order
    passage: Passage
    when: datetime | None
    words: frozenset[str]
    value: str


def asked_for(question: str) -> Asked:
    """The kind of value ``question`` asks for: "how much" money, "when" a date, and so on."""
    for kind, pattern in _ASKS:
        if pattern.search(question):
            return kind
    return "any"


def answer_card(question: str, passages: Sequence[Passage], when: Sequence[datetime | None]) -> Card:
    """The card for ``question`` from the search's ``passages`` (best first, already cut at the
    relevance floor), each dated by ``when`` (said, else written, else recorded)."""
    asked = asked_for(question)
    if not passages:
        return Card("nothing", asked)
    terms = [t for t in query_terms(question) if t not in _ASKING]
    read = [_read(p, rank, w, terms, asked, question) for rank, (p, w) in enumerate(zip(passages, when, strict=True))]
    candidates = [u for units_of in read[:READ] for u in units_of]
    weight = _telling([u.words for u in candidates])
    held = [u for u in candidates if u.words]
    if not held:
        return Card("closest", asked, line=_cut(_first_unit(passages[0]), LINE_CHARS), answer=_statement(read[0][0]))

    def score(unit: _Unit) -> tuple[float, int, int]:
        # The question's telling words, a value of the kind asked for, and the search's own order.
        words = sum(weight[w] for w in unit.words)
        return (words + (1.5 if unit.value else 0.0) - 0.15 * unit.rank, bool(unit.value), -unit.rank)

    best = max(held, key=score)
    unheld = math.log(len(candidates) + 1) + 0.1  # a word no unit holds tells the most
    whole = sum(weight.get(w, unheld) for w in terms)
    if sum(weight[w] for w in best.words) < COVERED * whole or (asked != "any" and not best.value):
        return Card("closest", asked, line=_cut(best.text, LINE_CHARS), answer=_statement(best))
    others = _disagreeing(best, held, asked, weight) if best.value else []
    return Card(
        "disputed" if others else "answered",
        asked,
        line=_line(best),
        answer=_statement(best),
        others=[_statement(u) for u in others],
    )


def _read(
    passage: Passage, rank: int, when: datetime | None, terms: list[str], asked: Asked, question: str
) -> list[_Unit]:
    found = []
    named = _held(f"{passage.title} {passage.heading}", terms)  # what every unit of the passage is about
    for text in units(passage.text) or [passage.text]:
        value = _value(text, asked, question)
        if asked == "person" and passage.speaker and not value:
            value = passage.speaker  # who said a turn is the one a "who" question asks about
        found.append(_Unit(text, rank, passage, when, _held(text, terms) | named, value))
    return found


def _held(text: str, terms: list[str]) -> frozenset[str]:
    """The question's terms ``text`` holds: the word itself or its plural, or a longer form of a
    term of five letters or more ("pricing" for "price" is a guess worth making; "lifetime" for "life" is not)."""
    words = {w.casefold() for w in _NOT_WORD.split(text) if w}
    return frozenset(
        t for t in terms if t in words or f"{t}s" in words or (len(t) >= 5 and any(w.startswith(t[:5]) for w in words))
    )


def _value(text: str, asked: Asked, question: str) -> str:
    """The first value of the kind asked for in ``text`` that the question does not itself hold."""
    pattern = _VALUES.get(asked)
    if pattern is None:
        return ""
    asked_words = {w.casefold() for w in _NOT_WORD.split(question) if w}
    for match in pattern.finditer(text):
        named = {k: v for k, v in match.groupdict().items() if v}
        value = (named.get("v") or named.get("one") or match.group(0)).strip()
        if value and not {w.casefold() for w in _NOT_WORD.split(value) if w} <= asked_words:
            return value
    return ""


def _telling(held: list[frozenset[str]]) -> dict[str, float]:
    """A word few of the units hold tells more than one most of them hold (an inverse frequency)."""
    count = max(len(held), 1)
    frequency = Counter(w for words in held for w in words)
    return {w: math.log((count + 1) / n) + 0.1 for w, n in frequency.items()}


def _disagreeing(best: _Unit, units_held: list[_Unit], asked: Asked, weight: dict[str, float]) -> list[_Unit]:
    """Units of other passages about the same thing (as much of the question as the answer's unit,
    ``SAME_THING``, by the words' weights) that give another value of the kind asked for; one a
    source, ordered by date."""
    if asked in ("any", "person", "place"):
        return []
    enough = SAME_THING * sum(weight[w] for w in best.words)
    seen: dict[int, _Unit] = {}
    for unit in units_held:
        if unit.passage.document_id == best.passage.document_id or not unit.value or _same(unit.value, best.value):
            continue
        if sum(weight[w] for w in unit.words) >= enough and unit.passage.document_id not in seen:
            seen[unit.passage.document_id] = unit
    return sorted(seen.values(), key=lambda u: (u.when is None, u.when or datetime.min))


def _same(one: str, other: str) -> bool:
    """Whether two values say the same thing however written: "1 February 2026" and "Feb 1", "$52"
    and "52 USD"; a date without a year is the same as one with it."""
    a, b = _reading(one), _reading(other)
    if a["month"] and b["month"]:
        return a["month"] == b["month"] and a["day"] == b["day"] and (not a["year"] or not b["year"] or a == b)
    if a["numbers"] and b["numbers"]:
        return a["numbers"] == b["numbers"]
    return _NOT_WORD.sub(" ", one.casefold()).split() == _NOT_WORD.sub(" ", other.casefold()).split()


def _reading(value: str) -> dict[str, object]:
    text = value.casefold()
    month = _MONTH.search(text)
    numbers = [n.replace(",", "") for n in re.findall(r"\d[\d,]*(?:\.\d+)?", text)]
    year = next((n for n in numbers if len(n) == 4), "")
    day = next((n for n in numbers if len(n) <= 2), "")
    return {"month": month.group(0)[:3] if month else "", "day": day, "year": year, "numbers": numbers}


def _line(unit: _Unit) -> str:
    """The value with the words that qualify it ("29 EUR per seat a month"), else the unit."""
    start = unit.text.find(unit.value)
    if start < 0:  # the speaker of a turn
        return unit.value
    end = start + len(unit.value)
    qualifier = _QUALIFIER.match(unit.text[end:])
    return unit.value + (qualifier.group(0) if qualifier else "")


def _statement(unit: _Unit) -> Statement:
    passage = unit.passage
    return Statement(
        value=unit.value,
        sentence=_cut(unit.text, UNIT_CHARS),
        chunk_id=passage.chunk_id,
        document_id=passage.document_id,
        title=passage.title,
        speaker=passage.speaker,
        when=unit.when,
    )


def _first_unit(passage: Passage) -> str:
    found = units(passage.text)
    return found[0] if found else passage.text


def _cut(text: str, limit: int) -> str:
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    space = text.rfind(" ", 0, limit)
    return text[: space if space > 0 else limit] + "…"
