"""The people a question names among those who speak in the caller's conversations.

"What did Priya say about the pilot?" names Priya; when Priya is a speaker in passages the
caller may read, search adds an arm of her turns, and embeds the question without her name
(``without_speakers``): every turn of hers is embedded under her name, so a question vector
that holds it leans towards her shortest turns ("hello?", "ok"), which are little but name.
The speakers are read from the rows the caller may see only, so the arm never depends on a
hidden passage, and kept per audience like the keyword statistics until a passage brings a new
speaker or one is withdrawn (``memory.models.SearchEpoch``).
"""

from __future__ import annotations

import re

from django.core.cache import cache
from django.db import connections

from brain.infra.replicas import read_alias
from memory.access import Clause
from memory.index.candidates import STATS_SECONDS, audience_of

MAX_SPEAKERS = 2000
_WORD = re.compile(r"[\w'’-]+")
_POSSESSIVE = r"(?:['’]s?)?"  # "Priya's", "James'": one rule for naming and for taking out


def known_speakers(clause: Clause) -> list[str]:
    access, audience = audience_of(clause, with_speakers=True)
    key = f"speakers:{audience}"
    names = cache.get(key)
    if names is None:
        with connections[read_alias()].cursor() as cursor:
            cursor.execute(
                f"SELECT DISTINCT c.speaker FROM memory_chunk c WHERE {access.sql} AND c.speaker <> '' "  # noqa: S608 (a memory.access clause)
                "LIMIT %(most)s",
                {**access.params, "most": MAX_SPEAKERS},
            )
            names = sorted(row[0] for row in cursor.fetchall())
        cache.set(key, names, STATS_SECONDS)
    return list(names)


def speakers_named(question: str, speakers: list[str]) -> list[str]:
    """Speakers whose whole name the question holds (any case), or a part of it written with a
    capital that no other speaker's name shares ("Priya" for Priya Shah)."""
    said = [re.sub(_POSSESSIVE + "$", "", word) for word in _WORD.findall(question)]  # "Priya's" names Priya
    lowered = f" {' '.join(word.lower() for word in said)} "
    words = set(said)
    parts: dict[str, set[str]] = {}
    for name in speakers:
        for part in _WORD.findall(name):
            parts.setdefault(part, set()).add(name)
    named = []
    for name in speakers:
        whole = " ".join(_WORD.findall(name.lower()))
        if whole and f" {whole} " in lowered:
            named.append(name)
            continue
        own = [p for p in _WORD.findall(name) if len(p) >= 3 and p[0].isupper() and parts[p] == {name}]
        if any(part in words for part in own):
            named.append(name)
    return named


def without_speakers(question: str, named: list[str]) -> str:
    """The question with the names of ``named`` (and their possessive) taken out, for embedding:
    the whole name in any case, or a capitalised part of it, as ``speakers_named`` finds them.
    The question itself when nothing would be left."""
    names: list[str] = []  # one pattern for all of them: one pass, whatever the number of names
    for name in named:
        parts = _WORD.findall(name)
        if parts:
            names.append("(?i:" + r"\s+".join(re.escape(part) for part in parts) + ")")
        names += [re.escape(part) for part in parts if len(part) >= 3 and part[0].isupper()]
    if not names:
        return question
    pattern = rf"(?<![\w'’-])(?:{'|'.join(sorted(set(names), key=len, reverse=True))}){_POSSESSIVE}(?![\w'’-])"
    text = " ".join(re.sub(pattern, " ", question).split())
    return text if _WORD.search(text) else question
