"""The part of a passage to show for a question: the sentences, rows or list lines that match it.

A passage can be a whole section; its first 300 characters are often not what was asked. The
snippet is built from whole units (a line, which in a passage is a row or a list item, or else a
sentence): the one that holds most of the question's words, then its neighbours while they fit. A
unit too long to fit alone is cut around its first match between words. Never a cut word; an
ellipsis stands where something was left out. The MCP tools and the members' pages both use it.
"""

from __future__ import annotations

import re

SNIPPET_CHARS = 320
BEFORE = 80  # characters kept before the first match when one unit alone is too long
# Words too common to count as matching; a query made only of them counts them anyway.
COMMON = frozenset(
    "a an and are as at be by did do does for from had has have how i in is it its of on or the to was were "  # noqa: SIM905
    "what when where which who whom why will with".split()
)
_SENTENCE_END = re.compile(r"(?<=[.!?…])\s+(?=\S)")


def query_terms(query: str) -> list[str]:
    """The words of a query worth matching, longest first (so a longer word wins an overlap)."""
    words = list(dict.fromkeys(w.casefold() for w in re.findall(r"\w+", query)))
    useful = [w for w in words if w not in COMMON and len(w) > 1] or words
    return sorted(useful, key=len, reverse=True)


def term_pattern(terms: list[str]) -> re.Pattern[str] | None:
    """Words that start with one of ``terms`` ("price" finds "prices" and "pricing")."""
    if not terms:
        return None
    return re.compile(r"\b(?:" + "|".join(re.escape(t) for t in terms) + r")\w*", re.IGNORECASE)


def units(text: str) -> list[str]:
    """A passage's lines, each cut into its sentences, whitespace folded."""
    out = []
    for line in text.splitlines():
        out += [" ".join(s.split()) for s in _SENTENCE_END.split(line) if s.strip()]
    return out


def best_part(text: str, terms: list[str], limit: int = SNIPPET_CHARS) -> str:
    """At most ``limit`` characters of ``text`` (plus an ellipsis at each end where text was left
    out), made of the unit that matches most of ``terms`` and its neighbours."""
    whole = " ".join(text.split())
    if len(whole) <= limit:
        return whole
    parts = units(text)
    if not parts:
        return ""
    pattern = term_pattern(terms)

    def score(part: str) -> int:
        return len({m.group(0).casefold() for m in pattern.finditer(part)}) if pattern else 0

    best = max(range(len(parts)), key=lambda i: (score(parts[i]), -i))
    if len(parts[best]) > limit:
        return _inside(parts[best], pattern, limit, cut_before=best > 0, cut_after=best < len(parts) - 1)
    first = last = best
    size = len(parts[best])
    while True:  # the units after the best one first: a row's or a sentence's sequel reads on
        if last + 1 < len(parts) and size + 1 + len(parts[last + 1]) <= limit:
            last += 1
            size += 1 + len(parts[last])
        elif first > 0 and size + 1 + len(parts[first - 1]) <= limit:
            first -= 1
            size += 1 + len(parts[first])
        else:
            break
    shown = " ".join(_ended(part) for part in parts[first:last])
    shown = f"{shown} {parts[last]}" if shown else parts[last]
    return ("…" if first > 0 else "") + shown + ("…" if last < len(parts) - 1 else "")


def _ended(unit: str) -> str:
    """A unit followed by another in a snippet: a line without its own stop (a list item, a row) gets
    a semicolon, so lines folded into one still read apart."""
    return unit if unit.endswith((".", "!", "?", "…", ":", ";", ",")) else unit + ";"


def _inside(part: str, pattern: re.Pattern[str] | None, limit: int, *, cut_before: bool, cut_after: bool) -> str:
    """``limit`` characters of one long unit, from a little before its first match, cut between words."""
    found = pattern.search(part) if pattern else None
    start = 0
    if found is not None and found.start() > BEFORE:
        start = found.start() - BEFORE
        space = part.find(" ", start, found.start())
        start = space + 1 if space >= 0 else start
    end = min(len(part), start + limit)
    if end < len(part):
        space = part.rfind(" ", start, end)
        end = space if space > start else end
    head = "…" if start or cut_before else ""
    return head + part[start:end] + ("…" if end < len(part) or cut_after else "")
