"""Linking names to known entities: exact, then suffix- and accent-insensitive, then fuzzy.

"BigCo", "BigCo Ltd" and "Bigco Inc." are one company; "Ana López" is "Ana Lopez"; "Ms Shah" is
the one known person called Shah; "Priya Shah" and "Priya Patel" are never merged.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from rapidfuzz import fuzz, process

from memory.extraction.kinds import short_form
from memory.extraction.vocabulary import HONORIFICS


@dataclass(frozen=True)
class KnownEntity:
    """An entity already in the organisation's memory."""

    name: str
    type: str  # one of ENTITY_TYPES
    aliases: tuple[str, ...] = ()
    key: int | None = None  # the entity's id, when it comes from the database
    fixed: bool = False  # a person chose the type: extraction never changes it


LEGAL_SUFFIXES = {"ltd", "limited", "inc", "llc", "gmbh", "plc", "corp", "corporation", "co", "sa", "sl", "ag", "bv"}


def fold(text: str) -> str:
    """Accents off, so "Ana López" meets "Ana Lopez"."""
    return "".join(ch for ch in unicodedata.normalize("NFKD", text) if not unicodedata.combining(ch))


def name_words(name: str) -> list[str]:
    words = re.sub(r"[^\w\s]", " ", fold(name).replace(".", "").replace("'s", "").casefold()).split()
    return words[1:] if len(words) > 1 and words[0] in ("the", *HONORIFICS) else words


def strip_legal(words: list[str]) -> list[str]:
    while len(words) > 1 and words[-1] in LEGAL_SUFFIXES:
        words = words[:-1]
    return words


def _keys(name: str) -> set[str]:
    # Compact forms (no spaces) so "Big Co" meets "BigCo"; with and without legal suffixes.
    words = name_words(name)
    return {"".join(words), "".join(strip_legal(words))} - {""}


class NameIndex:
    """Lookup structures over a set of known entities, built once per set."""

    def __init__(self, known: Sequence[KnownEntity]) -> None:
        self.exact: dict[str, KnownEntity] = {}
        self.writings: dict[str, set[str]] = {}  # casefolded form -> every way it is written
        self.by_key: dict[str, KnownEntity] = {}
        self.first_names: dict[str, set[KnownEntity]] = {}
        self.last_names: dict[str, set[KnownEntity]] = {}
        self.titled: dict[str, set[KnownEntity]] = {}  # "Ms Shah" known before "Priya Shah" was
        self.choices: list[str] = []  # words sorted: plain ratio on these is token_sort_ratio, done once
        self.forms: list[list[str]] = []
        self.owners: list[KnownEntity] = []
        for entity in known:
            for form in (entity.name, *entity.aliases):
                self.exact.setdefault(form.strip().casefold(), entity)
                self.writings.setdefault(form.strip().casefold(), set()).add(form.strip())
                for key in _keys(form):
                    self.by_key.setdefault(key, entity)
                words = strip_legal(name_words(form))
                if entity.type == "person" and len(words) > 1:
                    self.first_names.setdefault(words[0], set()).add(entity)
                    self.last_names.setdefault(words[-1], set()).add(entity)
                if len(words) == 1 and form.split()[0].strip(".").casefold() in HONORIFICS:
                    self.titled.setdefault(words[0], set()).add(entity)
                self.choices.append(" ".join(sorted(words)))
                self.forms.append(words)
                self.owners.append(entity)
        self._add_short_forms(known)

    def _add_short_forms(self, known: Sequence[KnownEntity]) -> None:
        """Once memory knows them, "Heron" is Project Heron and "Halvorsen" is Halvorsen Foods: a short
        form links when one known thing has it and it is no other name or a known person's first name."""
        shorts: dict[str, set[KnownEntity]] = {}
        written: dict[str, str] = {}
        for entity in known:
            short = short_form(entity.name, entity.type)
            if short:
                shorts.setdefault(short.casefold(), set()).add(entity)
                written[short.casefold()] = short
        for short, owners in shorts.items():
            if len(owners) == 1 and short not in self.exact and short not in self.first_names:
                self.exact[short] = next(iter(owners))
                self.writings[short] = {written[short]}

    def link(self, name: str, threshold: int, type_hint: str | None = None) -> KnownEntity | None:
        hit = self.exact.get(name.strip().casefold())
        hit = hit or next((self.by_key[k] for k in _keys(name) if k in self.by_key), None)
        if hit:
            return hit
        words = strip_legal(name_words(name))
        titled = name.split()[0].strip(".").casefold() in HONORIFICS
        if len(words) == 1 and type_hint in (None, "person"):
            # A bare first name, or a title and a surname ("Ms Shah"), is only safe when one known person has it.
            people = (self.last_names if titled else self.first_names).get(words[0], set())
            if len(people) == 1:
                return next(iter(people))
        if len(words) > 1 and len(self.titled.get(words[-1], set())) == 1:
            return next(iter(self.titled[words[-1]]))
        # Token-sort similarity, not token_set/WRatio: those score "BigCo" vs "BigCo Support Team" 90+.
        found = process.extract(" ".join(sorted(words)), self.choices, scorer=fuzz.ratio, score_cutoff=threshold)
        for _choice, _score, position in found:
            if _numbers(words) != _numbers(self.forms[position]):
                continue  # "Tester 3" and "Tester 4", "Plan 2024" and "Plan 2025" are different things
            if self.owners[position].type != "person" or _same_person(words, self.forms[position], threshold):
                return self.owners[position]
        return None


def _numbers(words: list[str]) -> list[str]:
    return re.findall(r"\d+", " ".join(words))


def _same_person(words: list[str], other: list[str], threshold: int) -> bool:
    # People who share only a first name are different people: both names must agree.
    if len(words) < 2 or len(other) < 2:
        return False
    return fuzz.ratio(words[-1], other[-1]) >= threshold and fuzz.ratio(words[0], other[0]) >= threshold


@lru_cache(maxsize=16)
def known_index(known: tuple[KnownEntity, ...]) -> NameIndex:
    return NameIndex(known)


def link_name(name: str, known: Sequence[KnownEntity], *, threshold: int = 88) -> KnownEntity | None:
    """The known entity ``name`` refers to: exact, then suffix/punctuation-insensitive, then fuzzy."""
    if not name.strip() or not known:
        return None
    return known_index(tuple(known)).link(name, threshold)
