"""What was derived from one labelled document, and how a derived thing is matched to its label:
facts by their words and subject, time expressions by the date the fact carries, promises by owner
and words, entities by name. Pure functions; no database."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date
from typing import Any

from rapidfuzz import fuzz

FACT_MATCH = 70  # rapidfuzz token_sort_ratio, 0-100, between a draft's statement and a label's
NAME_MATCH = 88  # rapidfuzz ratio between two names (subjects, entities, owners)
HEADER_LINE = re.compile(r"^\s*(?:from|to|cc|bcc|date|sent|subject|reply-to)\s*:", re.IGNORECASE | re.MULTILINE)
FIRST_PERSON = re.compile(r"\bI\b|\bI'(?:m|ll|ve|d)\b|\b(?:we|we're|we'll|we've|we'd|our|ours|us|my|me)\b", re.I)
_ISO = re.compile(r"\b\d{4}-\d{2}-\d{2}\b")
_YEAR = re.compile(r"\b(?:19|20)\d{2}\b")
# A transcript or chat turn's label left in a statement: "Jonas Weber (at 00:00:27): I'll review it".
TURN_LABEL = re.compile(r"^\W*[A-Z][\w .'’-]{0,60}?\W*\s*\([^)]{0,40}\):")
_WORD = re.compile(r"[a-z0-9]+")
_STOP = frozenset(
    ["the", "a", "an", "to", "of", "and", "will", "be", "it", "that", "this", "on", "in", "for", "with", "so", "by"]
)


@dataclass
class DerivedFact:
    statement: str
    subject: str | None = None
    kind: str = "fact"
    valid_from: date | None = None
    valid_to: date | None = None
    dates: tuple[date, ...] = ()  # its typed date values


@dataclass
class DerivedPromise:
    owner: str
    what: str
    due_on: date | None = None
    entry: int | None = None  # the register entry: a promise said in two documents is one entry with both


@dataclass
class DerivedValue:
    """A recorded value: the entity it belongs to, its key, and what it holds, written out."""

    entity: str
    key: str
    value: str


@dataclass
class Asked:
    """A labelled question, its answer as written, and what the memory's search returned for it."""

    question: str
    answer: str
    passages: list[str] = field(default_factory=list)  # the whole passages, best first
    snippets: list[str] = field(default_factory=list)  # as the search tool returns them
    card_status: str = ""  # the answer card's (memory.search.answer)
    card_line: str = ""
    card_sentence: str = ""
    card_passage: str = ""  # the whole passage the card's answer comes from
    kept: int = 0  # documents the search page lists, cut at the relevance floor
    listed: list[str] = field(default_factory=list)  # their passages


@dataclass
class Derived:
    """Everything derived from one document, and what the checks need to read it against."""

    facts: list[DerivedFact] = field(default_factory=list)
    entities: dict[str, str] = field(default_factory=dict)  # name as written -> kind
    promises: list[DerivedPromise] = field(default_factory=list)
    stored: bool = True  # False when saving it again changed nothing (no new document)
    names: list[tuple[str, ...]] = field(default_factory=list)  # per entity, every name it was written as
    values: list[DerivedValue] = field(default_factory=list)
    text: str = ""  # the title and the content as saved
    moment: date | None = None  # the document's own moment: when it was written, else its upload
    asked: list[Asked] = field(default_factory=list)


@dataclass
class Doc:
    id: str
    kind: str
    split: str
    labels: dict[str, Any]


def _day(value: Any) -> date | None:
    return date.fromisoformat(str(value)[:10]) if value else None


def _words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if w not in _STOP}


def _norm(text: str) -> str:
    return " ".join(_WORD.findall(text.lower()))


def same_name(a: str | None, b: str | None) -> bool:
    """Two names for one thing: equal but for case and punctuation, close in spelling, or one the
    other's first words ("Northwind" and "Northwind Traders")."""
    if not a or not b:
        return False
    x, y = _norm(a), _norm(b)
    if not x or not y:
        return False
    shorter, longer = sorted((x.split(), y.split()), key=len)
    return x == y or fuzz.ratio(x, y) >= NAME_MATCH or longer[: len(shorter)] == shorter


def fact_similarity(draft: str, label: str) -> float:
    return float(fuzz.token_sort_ratio(_norm(draft), _norm(label)))


def match_facts(drafts: list[DerivedFact], labels: list[dict[str, Any]], *, subject: bool) -> dict[int, int]:
    """Label position -> draft position: greedily, most similar pairs first, each used once; a pair
    needs FACT_MATCH similarity and, with ``subject``, the label's subject (a label without one
    takes any)."""
    pairs = []
    for li, label in enumerate(labels):
        for di, draft in enumerate(drafts):
            score = fact_similarity(draft.statement, label["statement"])
            if score >= FACT_MATCH and (
                not subject or not label.get("subject") or same_name(draft.subject, label["subject"])
            ):
                pairs.append((score, li, di))
    matched: dict[int, int] = {}
    for _, li, di in sorted(pairs, reverse=True):
        if li not in matched and di not in matched.values():
            matched[li] = di
    return matched


def time_correct(label: dict[str, Any], fact: DerivedFact | None) -> bool:
    """A time expression is read right when the fact it sits in was derived and carries its date
    (validity, a typed date value, or the date written into the statement); an expression with no
    date (a habit, "every Monday at 10:00") is right when the statement keeps its words and the fact
    gains no date anywhere."""
    if fact is None:
        return False
    if label.get("value"):
        wanted = date.fromisoformat(str(label["value"])[:10])
        if wanted in (fact.valid_from, fact.valid_to, *fact.dates) or str(wanted) in fact.statement:
            return True
        # An absolute date kept as written ("on 1 January 2026"), or a month written out with its year
        # ("in January" -> "in January 2026"), leaves the statement self-contained and right.
        kept = _YEAR.search(label["text"]) is not None and _norm(label["text"]) in _norm(fact.statement)
        month = wanted.day == 1 and f"{wanted:%B %Y}".lower() in _norm(fact.statement)
        return kept or month
    written = _norm(label["text"])
    undated = fact.valid_from is None and fact.valid_to is None and not fact.dates
    return written in _norm(fact.statement) and not _ISO.search(fact.statement) and undated


def match_promises(drafts: list[DerivedPromise], labels: list[dict[str, Any]]) -> dict[int, int]:
    """Label position -> draft position: same owner, and the draft's what holds at least half the
    label's content words (the owner's name aside)."""
    matched: dict[int, int] = {}
    for li, label in enumerate(labels):
        wanted = _words(label["what"]) - _words(label["owner"])
        best, best_share = None, 0.5
        for di, draft in enumerate(drafts):
            if di in matched.values() or not same_name(draft.owner, label["owner"]):
                continue
            share = len(wanted & _words(draft.what)) / len(wanted) if wanted else 1.0
            if share >= best_share:
                best, best_share = di, share
        if best is not None:
            matched[li] = best
    return matched


def entity_kind(derived: dict[str, str], name: str) -> str | None:
    """The kind derived for a labelled name, or None when no entity by that name was derived."""
    exact = [kind for written, kind in derived.items() if _norm(written) == _norm(name)]
    close = [kind for written, kind in derived.items() if same_name(written, name)]
    found = exact or close
    return found[0] if found else None


def labelled_entity_kind(derived: dict[str, str], entity: dict[str, Any]) -> str | None:
    """The kind derived for a labelled entity under its name or one of its aliases."""
    for name in (entity["name"], *entity.get("aliases", [])):
        kind = entity_kind(derived, name)
        if kind is not None:
            return kind
    return None
