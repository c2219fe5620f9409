"""Reading passages for glossary candidates: sentences, word tokens, and the uses of each key.

One pass over the text, regular expressions only, so the cost grows with the words and nothing
else. Three tallies come out of it: acronyms (``SLA``), capitalised runs of two or more words
(``Service Desk``), and single words with how often they were written capitalised in the middle
of a sentence, in lower case, or first in a sentence (where a capital says nothing).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cache

from memory.extraction.vocabulary import HONORIFICS


def words_of(text: str) -> frozenset[str]:
    return frozenset(text.split())


# Sentences are kept as offsets into their passage; a tally keeps a thinned sample of its uses.
KEPT_USES = 64
MAX_RUN = 4
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\s*\n\s*")
_WORD = re.compile(r"[A-Za-z0-9]+(?:[-'’&][A-Za-z0-9]+)*")
_ACRONYM = re.compile(r"(?:[A-Z][A-Z0-9&]*[A-Z0-9]|[A-Z]+[0-9]+)(?:s)?")
_ROMAN = re.compile(r"[IVXLC]+")
_POSSESSIVE = re.compile(r"['’]s$")
_MARKUP = re.compile(r"\{[^{}]{0,40}\}|<[^<>]{0,40}>")  # {pause}, <laughs>: notes about the text, not text
_OPENERS = frozenset(':"“‘(•*[')
_CONNECTORS = frozenset({"of", "for", "&"})
# What is said around a name that tells a person ("Priya said", "ask Srini", "... but he") from a
# thing ("the Falcon Console"), counted over every use.
_PERSON_BEFORE = words_of("ask asked tell told thank thanks hi hey dear cc ping pinged met meet emailed call called")
_PERSON_AFTER = words_of(
    "said says asked asks told tells thinks thought mentioned suggested agreed wants wanted wrote "
    "replied explained knows knew feels felt noted promised complained complaining gonna reckons"
)
_PRONOUNS = re.compile(r"(?i)\b(?:he|she|him|her|his|hers)\b")
_DETERMINERS = words_of("the a an our their your this that its my")


@dataclass
class Tally:
    """The uses of one candidate key: how many, written how, in which sentences and passages."""

    count: int = 0
    surfaces: Counter[str] = field(default_factory=Counter)
    uses: list[int] = field(default_factory=list)
    stride: int = 1
    passages: set[int] = field(default_factory=set)
    capital_mid: int = 0
    lower_mid: int = 0
    person_cues: int = 0
    thing_cues: int = 0

    def add(self, surface: str, sentence: int, passage: int) -> None:
        # Every `stride`-th use is kept; when the sample fills, every other one is dropped and the
        # stride doubles, so the sample spreads over the whole corpus in a fixed, repeatable way.
        if self.count % self.stride == 0:
            self.uses.append(sentence)
            if len(self.uses) >= KEPT_USES:
                self.uses = self.uses[::2]
                self.stride *= 2
        self.count += 1
        self.surfaces[surface] += 1
        self.passages.add(passage)

    def merge(self, other: Tally) -> None:
        self.count += other.count
        self.surfaces.update(other.surfaces)
        self.uses = sorted(set(self.uses) | set(other.uses))[:KEPT_USES]
        self.passages |= other.passages
        self.capital_mid += other.capital_mid
        self.lower_mid += other.lower_mid
        self.person_cues += other.person_cues
        self.thing_cues += other.thing_cues

    def surface(self) -> str:
        """The most frequent way of writing it; ties go to the first in alphabetical order."""
        return min(self.surfaces.items(), key=lambda item: (-item[1], item[0]))[0]


@dataclass
class Scan:
    """Everything one pass over the passages found."""

    passages: Sequence[str]
    sentences: list[tuple[int, int, int]] = field(default_factory=list)
    acronyms: dict[str, Tally] = field(default_factory=dict)
    runs: dict[str, Tally] = field(default_factory=dict)
    words: dict[str, Tally] = field(default_factory=dict)
    pairs: dict[str, Tally] = field(default_factory=dict)
    total_words: int = 0
    _first_pairs: dict[str, tuple[str, int, int]] = field(default_factory=dict)
    _initial_runs: list[tuple[list[str], int, int]] = field(default_factory=list)

    def sentence(self, index: int) -> str:
        passage, start, end = self.sentences[index]
        return self.passages[passage][start:end]

    def passage_of(self, index: int) -> int:
        return self.sentences[index][0]


def scan(passages: Sequence[str]) -> Scan:
    result = Scan(passages=passages)
    for p, text in enumerate(passages):
        for start, end in _sentence_spans(text):
            result.sentences.append((p, start, end))
            _scan_sentence(result, text[start:end], len(result.sentences) - 1, p)
    _resolve_initial_runs(result)
    result._first_pairs.clear()
    _merge_plurals(result.words)
    _merge_plurals(result.runs)
    _merge_plurals(result.pairs)
    return result


def _sentence_spans(text: str) -> list[tuple[int, int]]:
    spans, start = [], 0
    for match in _SENTENCE_END.finditer(text):
        if match.start() > start:
            spans.append((start, match.start()))
        start = match.end()
    if start < len(text) and text[start:].strip():
        spans.append((start, len(text)))
    return spans


def is_acronym(token: str) -> bool:
    if not _ACRONYM.fullmatch(token) or len(token) > 10 or _ROMAN.fullmatch(token):
        return False
    return sum(c.isupper() for c in token) >= 2 or any(c.isdigit() for c in token)


def acronym_key(token: str) -> str:
    return token[:-1] if token.endswith("s") else token


def _is_capitalised(token: str) -> bool:
    """Written with a capital and at least one small letter: ``Phoenix``, ``JavaBayes``, ``iPhone``."""
    has_lower = any(c.islower() for c in token)
    return has_lower and (token[0].isupper() or any(c.isupper() for c in token[1:]))


def _scan_sentence(result: Scan, text: str, sentence: int, passage: int) -> None:
    text = _MARKUP.sub(lambda m: " " * len(m.group()), text)
    tokens = [(_POSSESSIVE.sub("", m.group()), m.start(), m.end()) for m in _WORD.finditer(text)]
    result.total_words += len(tokens)
    i, previous = 0, -1
    while i < len(tokens):
        token, start, _ = tokens[i]
        initial = i == 0 or text[:start].rstrip()[-1:] in _OPENERS
        if "'" in token or "’" in token or not any(c.isalpha() for c in token):
            i += 1
        elif is_acronym(token):
            key = acronym_key(token)
            result.acronyms.setdefault(key, Tally()).add(key, sentence, passage)
            i += 1
        elif _is_capitalised(token):
            end = _run_end(text, tokens, i)
            words = [t for t, _, _ in tokens[i:end]]
            tally = _add_capitalised(result, words, initial, sentence, passage)
            if tally is not None:
                _count_cues(tally, text, tokens, i, end)
            i = end
        else:
            if token.isalpha() or "-" in token:
                tally = result.words.setdefault(token.lower(), Tally())
                tally.add(token, sentence, passage)
                tally.lower_mid += 1
                if previous == i - 1 and text[tokens[previous][2] : start] == " ":
                    _add_pair(result, tokens[previous][0], token, sentence, passage)
                previous = i if len(token) > 2 and token.lower() not in stop_words() else -1
            i += 1


def _run_end(text: str, tokens: list[tuple[str, int, int]], i: int) -> int:
    """Where a run of capitalised words starting at ``i`` ends (connectors only between two)."""
    end, capitals = i + 1, 1
    while end < len(tokens) and capitals < MAX_RUN:
        if text[tokens[end - 1][2] : tokens[end][1]] != " ":
            break
        token = tokens[end][0]
        if _is_capitalised(token) and not is_acronym(token):
            end, capitals = end + 1, capitals + 1
        elif token in _CONNECTORS and end + 1 < len(tokens) and _is_capitalised(tokens[end + 1][0]):
            if text[tokens[end][2] : tokens[end + 1][1]] != " ":
                break
            end, capitals = end + 2, capitals + 1
        else:
            break
    return end


def _add_capitalised(result: Scan, words: list[str], initial: bool, sentence: int, passage: int) -> Tally | None:
    if words[0].lower() in HONORIFICS:  # "Dr Shah": a person, whatever follows
        return None
    if len(words) == 1:
        tally = result.words.setdefault(words[0].lower(), Tally())
        tally.add(words[0], sentence, passage)
        tally.capital_mid += 0 if initial else 1
        return tally
    if initial:
        result._initial_runs.append((words, sentence, passage))
        return None
    return _add_run(result, words, sentence, passage)


def _add_run(result: Scan, words: list[str], sentence: int, passage: int) -> Tally:
    surface = " ".join(words)
    tally = result.runs.setdefault(surface.lower(), Tally())
    tally.add(surface, sentence, passage)
    tally.capital_mid += 1
    return tally


def _add_pair(result: Scan, first: str, second: str, sentence: int, passage: int) -> None:
    """Two ordinary words side by side ("belief net"); a tally starts at the second use, so the
    many pairs seen once cost a dictionary entry each and no more."""
    if len(second) <= 2 or second.lower() in stop_words():
        return
    surface = f"{first} {second}"
    key = surface.lower()
    tally = result.pairs.get(key)
    if tally is None:
        seen = result._first_pairs.pop(key, None)
        if seen is None:
            result._first_pairs[key] = (surface, sentence, passage)
            return
        tally = result.pairs[key] = Tally()
        tally.add(*seen)
    tally.add(surface, sentence, passage)


def _count_cues(tally: Tally, text: str, tokens: list[tuple[str, int, int]], start: int, end: int) -> None:
    before = tokens[start - 1][0].lower() if start > 0 else ""
    after = tokens[end][0].lower() if end < len(tokens) else ""
    if before in _PERSON_BEFORE or after in _PERSON_AFTER or _PRONOUNS.search(text, tokens[end - 1][2]):
        tally.person_cues += 1
    elif before in _DETERMINERS:
        tally.thing_cues += 1


def _resolve_initial_runs(result: Scan) -> None:
    """A run that opens a sentence is the same run if it is seen elsewhere; otherwise its first
    word is taken for an ordinary word written with a capital ("Yesterday Phoenix shipped")."""
    for words, sentence, passage in result._initial_runs:
        key = " ".join(words).lower()
        if key in result.runs:
            result.runs[key].add(" ".join(words), sentence, passage)
        elif len(words) > 2:
            _add_run(result, words[1:], sentence, passage)
        elif len(words) == 2 and words[1].lower() not in _CONNECTORS:
            tally = result.words.setdefault(words[1].lower(), Tally())
            tally.add(words[1], sentence, passage)
            tally.capital_mid += 1
    result._initial_runs.clear()


@cache
def stop_words() -> frozenset[str]:
    from spacy.lang.en.stop_words import STOP_WORDS

    return frozenset(STOP_WORDS)


def _merge_plurals(tallies: dict[str, Tally]) -> None:
    """``sprints`` joins ``sprint`` and ``policies`` joins ``policy`` when both forms are used."""
    for key in sorted(tallies):
        if key.endswith(("ss", "us", "is")):  # "process", "status", "analysis" are not plurals
            continue
        for suffix, replacement in (("ies", "y"), ("s", ""), ("es", "")):
            if key.endswith(suffix) and len(key) > len(suffix) + 2:
                stem = key[: -len(suffix)] + replacement
                if stem in tallies and stem != key:
                    tallies[stem].merge(tallies.pop(key))
                    break
