"""What kind of thing a name is: the model's label checked against what a name plainly is, and the
role words around it ("our customer Northwind", "the supplier Okapi Print", "the Platform team").

The order of evidence: a kind a person chose is never changed by extraction; role words in the text
beat the model's guess and a guess memory kept from before; the model's label, checked here, comes
last. A name nothing types is ``other``, never ``person`` by default.
"""

from __future__ import annotations

import re

from memory.extraction.names import (
    COMPANY_WORDS,
    PRODUCT_WORDS,
    plain_kind,
    word_set,
)

_NAME = r"((?:[A-Z][\w&'.-]*)(?:\s+(?:[A-Z][\w&'.-]*|&|of))*)"
# "our customer Northwind", "the supplier Okapi Print", "project Falcon", "Northwind, a customer".
_ROLE_BEFORE = re.compile(
    r"\b(?i:our|a|the|new|key|existing|another|biggest|largest)\s+(?i:new\s+|key\s+|biggest\s+|largest\s+)?"
    r"(?i:(customers?|clients?|accounts?|suppliers?|vendors?|partners?|printers?|contractors?|provider|project))\s+"
    + _NAME
)
_PROJECT_BEFORE = re.compile(r"\b[Pp]roject\s+" + _NAME)
_ROLE_AFTER = re.compile(
    _NAME + r",\s+(?:a|an|our|one of our)\s+(?:\w+\s+)?(customer|client|supplier|vendor|partner)s?\b"
)
_TEAM_AFTER = re.compile(r"\b(?:[Tt]he\s+)?([A-Z][\w&-]*(?:\s+[A-Z][\w&-]*)?)\s+team\b")
# "Marta Ruiz <marta.ruiz@...>" is a person; "Verdant Billing <billing@...>" is not.
_ADDRESSED = re.compile(_NAME + r"\s*<([\w.+-]+)@[\w.-]+>")
_WORK = re.compile(_NAME + r"\s+(?i:migration|rollout|programme|program|initiative|roadmap)\b")
# People by what is said of them: "led by Marta Ruiz", "thanks Diego", "welcome Inés Moreno".
_PERSON_BY = re.compile(
    r"\b(?:led|run|owned|managed|maintained|chaired|hosted|handled|approved|signed|presented|reviewed)\s+by\s+"
    r"([A-Z][\w'-]+\s+[A-Z][\w'-]+)\b"
)
_GREETED = re.compile(
    r"(?:^|[.!?]\s+|\n)\s*(?i:thanks|thank\s+you|cheers|congrats|congratulations|well\s+done|nice\s+one|"
    r"great\s+job|good\s+job|hi|hey|hello|welcome)\s*,?\s+([A-Z][\w'-]+(?:\s+[A-Z][\w'-]+)?)\b",
    re.MULTILINE,
)
_ROLE_KINDS = {"customer": "customer", "client": "customer", "account": "customer", "project": "project"}


def _role_kind(word: str) -> str:
    return _ROLE_KINDS.get(word.lower().rstrip("s"), "organisation")


def role_kinds(text: str) -> dict[str, str]:
    """Names the text gives a kind by role words: casefolded name -> kind."""
    found: dict[str, str] = {}
    for match in _ROLE_BEFORE.finditer(text):
        found.setdefault(match.group(2).casefold(), _role_kind(match.group(1)))
    for match in _ROLE_AFTER.finditer(text):
        found.setdefault(match.group(1).casefold(), _role_kind(match.group(2)))
    for match in _PROJECT_BEFORE.finditer(text):
        found.setdefault(match.group(0).casefold(), "project")
        found.setdefault(match.group(1).casefold(), "project")
    for match in _ADDRESSED.finditer(text):
        first = match.group(1).split()[0].casefold()
        found.setdefault(
            match.group(1).casefold(), "person" if match.group(2).casefold().startswith(first) else "organisation"
        )
    for match in _WORK.finditer(text):
        if match.group(1).casefold() not in ("the", "our", "this", "that", "database"):
            found.setdefault(match.group(0).casefold(), "project")
            found.setdefault(match.group(1).casefold(), "project")
    for match in _TEAM_AFTER.finditer(text):
        if match.group(1).casefold() not in ("the", "our", "a", "this", "that"):
            found.setdefault(f"{match.group(1)} team".casefold(), "team")
    for match in [*_PERSON_BY.finditer(text), *_GREETED.finditer(text)]:
        if looks_like_person(match.group(1)):
            found.setdefault(match.group(1).casefold(), "person")
    return {re.sub(r"^the\s+", "", name): kind for name, kind in found.items()}


def short_form(name: str, kind: str) -> str | None:
    """The one word a known name goes by once people know it: "Heron" for Project Heron, "Halvorsen" for
    Halvorsen Foods, "Ledger" for Kestrel Ledger. None when the name has no such form."""
    words = name.split()
    if len(words) != 2 or not all(w[:1].isupper() for w in words):
        return None
    first, last = words
    if kind == "project" and first.casefold() == "project":
        return last
    if kind in ("organisation", "customer", "supplier", "partner") and last.casefold() in COMPANY_WORDS:
        return first
    if kind == "product" and last.casefold() in PRODUCT_WORDS:
        return last
    return None


def looks_like_person(name: str) -> bool:
    """A PERSON label is believed for a name of capitalised words that is no known place or software,
    and not one capitalised word that is also an ordinary word ("Support", "Finance")."""
    words = name.split()
    if not words or plain_kind(name) or not all(w[:1].isupper() for w in words):
        return False
    return not (len(words) == 1 and words[0].casefold() in _COMMON_NOUNS)


_COMMON_NOUNS = word_set(
    """support finance sales marketing legal operations engineering platform product design security billing
    ledger dispatch atlas heron phoenix falcon customer supplier project team office"""
)
