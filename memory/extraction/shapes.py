"""What extraction produces: entities, values and facts, before they are stored."""

from __future__ import annotations

import datetime
from dataclasses import dataclass


def _table(spec: str) -> dict[str, str]:
    """'key: word word; key2: word' -> {word: key}; keeps the context-word tables readable."""
    return {w: k.strip() for part in spec.split(";") for k, words in [part.split(":")] for w in words.split()}


MAX_FACTS = 200  # what one document yields at most, in its order


@dataclass
class ExtractedEntity:
    name: str  # canonical: the KnownEntity's name when linked
    type: str
    aliases: list[str]  # surface forms seen
    known: bool


@dataclass
class ExtractedValue:
    key: str  # snake_case: price, deal_value, headcount, renewal_date, amount, percent, date...
    number: float | None = None
    date: datetime.date | None = None
    text: str = ""
    unit: str = ""  # ISO currency, "%", "days", "people"


@dataclass
class ExtractedFact:
    statement: str  # the sentence as written; its dates are in valid_from, valid_to and the values
    kind: str  # one of FACT_KINDS
    subject: str | None
    object: str | None
    relation: str | None
    single_valued: bool  # the (subject, relation/key) holds one value at a time
    valid_from: datetime.date | None
    valid_to: datetime.date | None
    values: list[ExtractedValue]
    char_start: int
    char_end: int
    relative: bool = False  # a date in it was resolved against the document's moment ("by Friday")
    topic: str = ""  # "subject words|attribute" when it states one value of one thing (``topics``)


@dataclass
class Extraction:
    entities: list[ExtractedEntity]
    facts: list[ExtractedFact]
