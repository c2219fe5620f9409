"""What kind of thing a name is: the model's label checked against what a name plainly is, and the
role words around it ("our customer Northwind", "the supplier Okapi Print", "the Platform team").

The order of evidence: a kind a person chose is never changed by extraction; role words in the text
beat the model's guess and a guess memory kept from before; the model's label, checked here, comes
last. A name nothing types is ``other``, never ``person`` by default.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from memory.extraction.names import (
    COMPANY_WORDS,
    PRODUCT_WORDS,
    common_word,
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
_NAME_BEFORE = re.compile(r"[A-Z][\w.&'-]*[ \t]+$")
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
# Software a document describes: "our billing system, Queenbee", "the Queenbee app", "Jamf tool".
_SYSTEM_NOUNS = r"(?:system|tool|app|application|platform|service|software|database|repository|repo|dashboard)"
# A name on one line, without the full stop after it: "Jamf", "Remote.com", "PTO by Deel".
_LINE_NAME = r"((?:[A-Z][\w&'-]*(?:\.[\w-]+)*)(?:[ \t]+(?:[A-Z][\w&'-]*(?:\.[\w-]+)*|&|of|by))*)"
_SYSTEM_BEFORE = re.compile(
    r"\b(?i:our|the|their|its)\s+(?:[a-z-]+\s+){0,2}(?i:"
    + _SYSTEM_NOUNS[3:]
    + r",?[ \t]+(?:called[ \t]+)?"
    + _LINE_NAME
)
_SYSTEM_AFTER = re.compile(_LINE_NAME + r"[ \t]+(?i:" + _SYSTEM_NOUNS[3:] + r"\b")
# "observability tools (Sentry, Honeycomb)", "their platform (Ariba, Coupa, etc)".
_SYSTEM_LIST = re.compile(r"(?i:" + _SYSTEM_NOUNS[3:] + r"s?[ \t]*\(([^)\n]{1,160})\)")
# An organisation speaking of itself: "we at Acme", "at Acme, we", "Acme teammates", "Acme's handbook".
_OWN_ORG = re.compile(
    r"\b(?i:we\s+at)\s+"
    + _NAME
    + r"|\b(?i:at|within|across)\s+"
    + _NAME
    + r",?\s+(?i:we|every|all)\b|"
    + _NAME
    + r"(?:'s|’s)?\s+(?i:teammates|employees?|staff|team\s+members|organi[sz]ation|handbook|mission|values|teams)\b"
)
# "Richard Lau @richardlau", "Matteo Collina (@mcollina)": a person and their handle.
_HANDLED = re.compile(
    r"\b([A-Z][\w'’-]+(?:\s+(?:[A-Z][\w'’-]+|de|du|van|von|da|di|la|le)){1,3})\s+\(?@[\w-]+(?![\w/-])"
)
_OPENING_WORD = re.compile(r"(?i:the|our|this|that|each|every|any|new|use|using|a|an|in|on)")
_LEADING = re.compile(r"^(?:the|all|our|every|each|other|any)\s+")
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
        if _NAME_BEFORE.search(text, max(0, match.start() - 40), match.start()):
            continue  # "the Node.js Project Calendar": a longer name's word, no project
        found.setdefault(match.group(0).casefold(), "project")
        found.setdefault(match.group(1).casefold(), "project")
    for match in _OWN_ORG.finditer(text):
        name = next(g for g in match.groups() if g)
        if name.casefold() not in ("we", "our", "the", "all", "every") and not plain_kind(name):
            found.setdefault(_LEADING.sub("", re.sub(r"(?:'s|’s)$", "", name).casefold()), "organisation")
    for match in _HANDLED.finditer(text):
        found.setdefault(match.group(1).casefold(), "person")
    listed = [item.strip() for m in _SYSTEM_LIST.finditer(text) for item in re.split(r",|\band\b", m.group(1))]
    for name in listed:
        if re.fullmatch(_LINE_NAME, name) and not _OPENING_WORD.fullmatch(name) and not _everyday(name):
            found.setdefault(name.casefold(), "system")
    for match in [*_SYSTEM_BEFORE.finditer(text), *_SYSTEM_AFTER.finditer(text)]:
        name = match.group(1)
        if not _OPENING_WORD.fullmatch(name) and not _everyday(_LEADING.sub("", name.casefold())):
            found.setdefault(_LEADING.sub("", name.casefold()), "system")
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
    named: dict[str, str] = {}
    for name, kind in found.items():  # the first evidence for a name wins, as above
        named.setdefault(_LEADING.sub("", name), kind)
    return named


def _everyday(name: str) -> bool:
    """One everyday word ("Cloud", "Support"): no software's name by the words around it alone."""
    return len(name.split()) == 1 and common_word(name)


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


# --- names a table's header types ------------------------------------------------------------------

# The word a column's header ends with, and the kind of the names its cells hold: "Team member",
# "Author/Reviewer", "Approved by" hold people; "Vendor" companies; "Source/platform" software.
_COLUMN_KINDS = {
    **dict.fromkeys(
        word_set(
            """member members person people employee employees owner owners assignee assignees attendee attendees
            maintainer maintainers contact contacts speaker speakers presenter author authors reviewer reviewers
            approver approvers dri"""
        ),
        "person",
    ),
    **dict.fromkeys(
        word_set(
            """company companies vendor vendors supplier suppliers customer customers client clients partner partners
            organisation organisations organization organizations provider providers sponsor sponsors employer"""
        ),
        "organisation",
    ),
    **dict.fromkeys(
        word_set("tool tools system systems software service services platform platforms application apps"), "system"
    ),
    **dict.fromkeys(word_set("team teams department departments squad"), "team"),
    **dict.fromkeys(word_set("city cities country countries"), "place"),
}
_BY_PERSON = re.compile(r"(?i)^(?:approved|reviewed|owned|written|led|signed|prepared|presented)\s+by$")
_CELL_NAME = re.compile(r"[A-Z][\w'’./-]*(?:[ \t]+(?:[A-Z][\w'’.-]*|of|de|van|von|da|di|du|la|le|&))*")
_CELL_SPLIT = re.compile(r"\s*(?:,|&|\band\b|;)\s*|\s+/\s+")
_NOT_NAMES = word_set("yes no none n/a na tbd tbc all other others various everyone nobody")


def column_kind(header: str) -> str | None:
    """The kind of the names a column holds, by its header's last word (each part of "A/B" must agree
    where it says one); None for a header that says nothing of it ("Name", "Description")."""
    kinds = set()
    for part in header.split("/"):
        part = re.sub(r"[*_`]|\(.*?\)", " ", part).strip()
        if _BY_PERSON.match(part):
            kinds.add("person")
        elif part:
            kind = _COLUMN_KINDS.get(part.split()[-1].casefold())
            if kind:
                kinds.add(kind)
    return kinds.pop() if len(kinds) == 1 else None


def record_names(
    header: Sequence[str], cells: Sequence[str], lower_words: frozenset[str]
) -> list[tuple[str, list[str], str]]:
    """The names a table row holds in the columns whose header types them: each cell, the names in
    it and their kind; "Mariam & Stompy" under "Team member" is two people. A cell is read only when
    the whole of it (or of each part) is a name, of four words at most, and a single word is none the
    document writes in lower case ("Engineering", "Yes")."""
    found = []
    for name, cell in zip(header, cells, strict=False):
        kind = column_kind(name)
        cell = re.sub(r"[*_`]", "", cell).strip()
        parts = [p for p in _CELL_SPLIT.split(cell) if p]
        if kind is not None and parts and all(_named(p, lower_words) for p in parts):
            found.append((cell, parts, kind))
    return found


def everyday_cells(header: Sequence[str], cells: Sequence[str], subject: int) -> set[str]:
    """Cells of a row that are everyday words, not names, though capitalised ("First Version",
    "Annual Review", "Review & Approval" under "Comments"): the whole cell, two words or more, each
    an ordinary English word, in a column whose header names no kind, other than the row's subject.
    Casefolded."""
    plain = set()
    for index, cell in enumerate(cells):
        words = re.findall(r"[^\W\d_][\w'’-]*", cell)
        if index == subject or index >= len(header) or column_kind(header[index]) or len(words) < 2:
            continue
        if all(common_word(word) for word in words):
            plain.add(" ".join(cell.split()).casefold())
    return plain


def _named(part: str, lower_words: frozenset[str]) -> bool:
    words = part.split()
    if not _CELL_NAME.fullmatch(part) or len(words) > 4 or part.casefold() in _NOT_NAMES:
        return False
    return len(words) > 1 or part.casefold() not in lower_words
