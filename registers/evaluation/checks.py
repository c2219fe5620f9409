"""Checks read off what was derived, beside the labels: table or list markup left in the output,
entities that are no names, years that neither the document nor its moment gives, recorded values
matched to labelled ones, and whether a passage holds a question's answer. Pure functions; no
database."""

from __future__ import annotations

import calendar
import re
from datetime import date
from typing import Any

from rapidfuzz import fuzz
from spacy.lang.en.stop_words import STOP_WORDS

from registers.evaluation.matching import NAME_MATCH, DerivedFact, DerivedValue, same_name

# A table's cells (a bar opening or closing a line, or two bars on one line), a rule of dashes that
# stands between no words (a dash run between words is prose's em dash: "maildir---it's"), or a list
# item's marker at the start of a line. One bar inside a sentence is a shell's pipe, not a table.
MARKUP = re.compile(r"^\s*\||\|\s*$|\|[^|\n]*\||(?<![A-Za-z])-{3,}(?![A-Za-z])|^\s*(?:[-*]|\d{1,3}\.)\s", re.MULTILINE)
_WORDS = re.compile(r"\w+")
_LINK_TARGET = re.compile(r"(?<=\])\([^)\s]*\)")  # where a markdown link points: "[text](url)" reads "text"
_FOUR_DIGITS = re.compile(r"(?<!\d)\d{4}(?!\d)")
_CAPITALISED = re.compile(r"[A-Z][a-z'’]+")
_ADDRESS = re.compile(r"<?(?:https?://|www\.)\S+|\S+@\S+")  # a link or an e-mail address, where names are lower case
CALENDAR = frozenset(calendar.month_name[1:]).union(calendar.day_name)
REVERSE_MIN_WORDS = 3  # a passage this long or longer counts when it lies inside the answer


def has_markup(text: str) -> bool:
    return MARKUP.search(text) is not None


def words(text: str) -> list[str]:
    """The words of a text, folded, without punctuation or markup (a link's target included: a reader
    sees its text): what "the same words" compares."""
    return _WORDS.findall(_LINK_TARGET.sub("", text).casefold())


def _inside(part: list[str], whole: list[str]) -> bool:
    return bool(part) and f" {' '.join(part)} " in f" {' '.join(whole)} "


# --- entities that are no names ------------------------------------------------------------------


def common_word(name: str, text: str) -> bool:
    """A single capitalised word that is a word of the language: a function word, a month or a day,
    or a word the document itself also writes in lower case ("Duty" where it says "on duty"), links
    and addresses aside."""
    name = name.strip()
    if not _CAPITALISED.fullmatch(name):
        return False
    lower = name.lower()
    if lower in STOP_WORDS or name in CALENDAR:
        return True
    return re.search(rf"(?<![\w.#/@-]){re.escape(lower)}(?![\w/@-])", _ADDRESS.sub(" ", text)) is not None


def junk_reason(names: tuple[str, ...], labels: dict[str, Any], text: str) -> str | None:
    """Why an entity derived under these names is no entity, or None when it may be one. A name the
    labels give as an entity (or an alias of one) is never junk."""
    labelled = {_key(n) for e in labels.get("entities", []) for n in (e["name"], *e.get("aliases", []))}
    if any(_key(name) in labelled for name in names):
        return None
    refused = {_key(n) for n in labels.get("not_entities", [])}
    for name in names:
        if _key(name) in refused:
            return f"{name!r} is labelled as no entity"
        if has_markup(name):
            return f"{name!r} holds table or list syntax"
        if common_word(name, text):
            return f"{name!r} is a single common word"
        if everyday_lower_case(name):
            return f"{name!r} is an everyday word in lower case"
    return None


# How common (wordfreq's Zipf scale) an unlabelled word in lower case must be to count as a word of
# the language, whatever it names: "release" 5.1, "backlog" 3.2, "importer" 3.1. Below, a word is
# as likely a name its owners write in lower case ("dapper" 2.9, "sqlite" 2.1, "notmuch" 0) as an
# uncommon word ("tooling" 3.0, "timestamp" 2.6), and the labels must say which.
EVERYDAY_ZIPF = 3.0


def everyday_lower_case(name: str) -> bool:
    """One word in lower case that English uses every day ("backlog", "importer", "the"): taken for
    the name of some software or a handle, it is junk."""
    import wordfreq

    name = name.strip()
    if not re.fullmatch(r"[a-z][a-z'’-]+", name):
        return False
    return name in STOP_WORDS or wordfreq.zipf_frequency(name, "en") >= EVERYDAY_ZIPF


def _key(name: str) -> str:
    return " ".join(words(name))


# --- years nobody wrote ------------------------------------------------------------------------------


def invented_years(fact: DerivedFact, text: str, moment: date | None) -> list[int]:
    """The years of a fact's validity or date values that the document's text never writes and that
    are not the year of its own moment."""
    carried = {d.year for d in (fact.valid_from, fact.valid_to, *fact.dates) if d is not None}
    written = {int(y) for y in _FOUR_DIGITS.findall(text)}
    if moment is not None:
        written.add(moment.year)
    return sorted(carried - written)


# --- recorded values ------------------------------------------------------------------------------------


def _same_attribute(key: str, attribute: str) -> bool:
    a, b = words(key.replace("_", " ")), words(attribute)
    if not a or not b:
        return False
    return a == b or fuzz.ratio(" ".join(a), " ".join(b)) >= NAME_MATCH or set(a) <= set(b) or set(b) <= set(a)


def match_values(derived: list[DerivedValue], labels: list[dict[str, Any]]) -> dict[int, int]:
    """Label position -> derived position: the same entity, an attribute the key names, and the
    label's value written inside the derived one; each used once, in label order."""
    matched: dict[int, int] = {}
    for li, label in enumerate(labels):
        wanted = words(str(label["value"]))
        for di, value in enumerate(derived):
            if di in matched.values() or not same_name(value.entity, label["entity"]):
                continue
            if _same_attribute(value.key, label["attribute"]) and _inside(wanted, words(value.value)):
                matched[li] = di
                break
    return matched


# --- passages ------------------------------------------------------------------------------------------


def holds_answer(passage: str, answer: str) -> bool:
    """A passage holds an answer when the answer's words run inside it, or when the passage (of a few
    words at least) lies inside the answer's sentence or row; whitespace, case and markup aside."""
    p, a = words(passage), words(answer)
    if _inside(a, p) or (len(p) >= REVERSE_MIN_WORDS and _inside(p, a)):
        return True
    # A table row: its cells, each whole and in order, whatever stands between them (a passage says
    # each cell with its column's name).
    cells = [words(cell) for cell in answer.strip().strip("|").split("|") if words(cell)]
    return len(cells) > 1 and all(_inside(cell, p) for cell in cells)
