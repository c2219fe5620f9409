"""Definitions written into the text itself, offered as suggestions (never taken as confirmed).

Two kinds: an acronym next to its expanded form in brackets, either way round, whose letters
must match ("SLA (service level agreement)", "service level agreement (SLA)"); and a defining
sentence ("a MID is a ...", "X means ...", "by X we mean ...", "X stands for ..."; "X refers to" is left
out, as people say it of what a passage mentions). Stronger
kinds win when a term has several: an expansion, then an explicit "means", then "is a".
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from registers.glossary.candidates_text import acronym_key, is_acronym

MAX_DEFINITION = 200
EXPANSION, EXPLICIT, COPULA = 3, 2, 1
_PHRASE = r"[A-Za-z][\w&-]*(?: [A-Za-z][\w&-]*){0,3}"
_ACRONYM_THEN_LONG = re.compile(r"\b([A-Z][A-Za-z0-9&]*[A-Z0-9]s?)\s*\(([^()]{3,80})\)")
_LONG_THEN_ACRONYM = re.compile(r"\(\s*([A-Z][A-Za-z0-9&]*[A-Z0-9]s?)\s*\)")
_WE_MEAN = re.compile(rf"(?i)\bby (?:an? |the )?({_PHRASE}),? we mean (.+)")
_LEADS = r"(?:(?:so|well|okay|ok|and|but|now|right)\W+)*"
_STANDS_FOR = re.compile(rf"({_PHRASE}),? (?:stands for|is short for) (.+)")
_MEANS = re.compile(rf"(?i)^{_LEADS}(?:(?:a|an|the|our)\s+)?({_PHRASE}),? means (.+)")
_COPULA = re.compile(
    rf"(?i)^{_LEADS}(?:(?:a|an|the|our)\s+)?({_PHRASE}) (?:is|are) ((?:basically |just )?(?:a|an|the) .+)"
)
_WORD = re.compile(r"[A-Za-z0-9][\w&-]*")
_SMALL_WORDS = frozenset({"of", "and", "the", "for", "to", "in", "on", "a", "an", "&"})
_ASIDES = frozenset({"see", "seen", "so", "sic", "since", "say"})  # "SLA (see the list above)" is no expansion
_TRIGGERS = ("(", " is ", " are ", "mean", "stands for", "short for")


@dataclass(frozen=True)
class Definition:
    key: str  # the defined term, lower case ("sla", "pod", "payments pod")
    text: str  # the definition as written
    strength: int
    sentence: int


def definitions_in(sentence: str, index: int) -> list[Definition]:
    if not any(trigger in sentence for trigger in _TRIGGERS):
        return []
    found = _expansions(sentence, index)
    for pattern, strength in ((_WE_MEAN, EXPLICIT), (_STANDS_FOR, EXPLICIT), (_MEANS, EXPLICIT), (_COPULA, COPULA)):
        for match in pattern.finditer(sentence):
            text = _clip(match.group(2))
            if len(text.split()) >= 2:
                found += [Definition(key, text, strength, index) for key in _suffixes(match.group(1))]
    return found


def _expansions(sentence: str, index: int) -> list[Definition]:
    found = []
    for match in _ACRONYM_THEN_LONG.finditer(sentence):
        short, long = match.group(1), match.group(2).strip()
        if is_acronym(short) and letters_match(acronym_key(short), long):
            found.append(Definition(acronym_key(short).lower(), long, EXPANSION, index))
    for match in _LONG_THEN_ACRONYM.finditer(sentence):
        short = match.group(1)
        if is_acronym(short):
            long = _long_form_before(sentence[: match.start()], acronym_key(short))
            if long:
                found.append(Definition(acronym_key(short).lower(), long, EXPANSION, index))
    return found


def _long_form_before(before: str, short: str) -> str:
    """The fewest words just before the brackets whose letters spell the acronym."""
    words = list(_WORD.finditer(before))[-(len(short) + 3) :]
    for k in range(2, len(words) + 1):
        first = words[-k]
        candidate = before[first.start() : words[-1].end()]
        if first.group()[0].lower() == short[0].lower() and letters_match(short, candidate):
            return candidate
    return ""


def letters_match(short: str, long: str) -> bool:
    """Every word of ``long`` that is not a small one gives its initial to ``short``, in order; the
    letters left over may come from inside a word ("eXtensible Markup Language") or from a small
    word's initial ("Department of Defense")."""
    words = [w.lower() for w in _WORD.findall(long)]
    if not 2 <= len(words) <= len(short) + 3 or words[0][0] != short[0].lower() or words[0] in _ASIDES:
        return False
    letters = [c.lower() for c in short if c.isalnum()]
    content_left = sum(w not in _SMALL_WORDS for w in words)
    pos = 0
    for word in words:
        small = word in _SMALL_WORDS
        spare = len(letters) - pos - content_left
        if small:
            if spare > 0 and letters[pos] == word[0]:
                pos += 1
            continue
        if pos >= len(letters) or letters[pos] != word[0]:
            return False
        pos, content_left = pos + 1, content_left - 1
        for c in word[1:]:
            if len(letters) - pos - content_left > 0 and c == letters[pos]:
                pos += 1
    return pos == len(letters)


def _suffixes(phrase: str) -> list[str]:
    words = phrase.lower().split()
    return [" ".join(words[i:]) for i in range(len(words))]


def _clip(text: str) -> str:
    text = text.strip()
    if len(text) > MAX_DEFINITION:
        text = text[:MAX_DEFINITION].rsplit(" ", 1)[0]
    return text.rstrip(" ,;:.!?-")
