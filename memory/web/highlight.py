"""Snippets of a passage around the words of a query, with those words marked.

Everything is escaped here, piece by piece, before the ``<mark>`` tags are put around the
matches, so the result is safe to insert into a page as it is."""

from __future__ import annotations

import re

from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

SNIPPET_CHARS = 320
BEFORE = 80  # characters of context kept before the first match
# Words too common to be worth marking; a query made only of them marks them anyway.
COMMON = frozenset(
    "a an and are as at be by did do does for from had has have how i in is it its of on or the to was were "  # noqa: SIM905
    "what when where which who whom why will with".split()
)


def query_terms(query: str) -> list[str]:
    """The words of a query worth marking, longest first (so a longer word wins an overlap)."""
    words = list(dict.fromkeys(w.casefold() for w in re.findall(r"\w+", query)))
    useful = [w for w in words if w not in COMMON and len(w) > 1] or words
    return sorted(useful, key=len, reverse=True)


def _pattern(terms: list[str]) -> re.Pattern[str] | None:
    if not terms:
        return None
    return re.compile(r"\b(?:" + "|".join(re.escape(t) for t in terms) + r")\w*", re.IGNORECASE)


def window(text: str, terms: list[str], limit: int = SNIPPET_CHARS) -> str:
    """About ``limit`` characters of ``text`` (whitespace folded) starting a little before the first
    match, cut at word boundaries, with an ellipsis where text was left out."""
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    pattern = _pattern(terms)
    found = pattern.search(text) if pattern else None
    start = 0
    if found is not None and found.start() > BEFORE:
        start = found.start() - BEFORE
        space = text.find(" ", start, found.start())
        start = space + 1 if space >= 0 else start
    end = min(len(text), start + limit)
    if end < len(text):
        space = text.rfind(" ", start, end)
        end = space if space > start else end
    return ("…" if start else "") + text[start:end] + ("…" if end < len(text) else "")


def highlight(text: str, terms: list[str]) -> SafeString:
    """``text`` escaped, with each word that starts with a query term inside ``<mark>``."""
    pattern = _pattern(terms)
    if pattern is None:
        return mark_safe(escape(text))  # noqa: S308 (escaped above)
    pieces: list[str] = []
    last = 0
    for match in pattern.finditer(text):
        pieces.append(escape(text[last : match.start()]))
        pieces.append(f"<mark>{escape(match.group(0))}</mark>")
        last = match.end()
    pieces.append(escape(text[last:]))
    return mark_safe("".join(pieces))  # noqa: S308 (every piece is escaped)


def snippet(text: str, query: str, limit: int = SNIPPET_CHARS) -> SafeString:
    terms = query_terms(query)
    return highlight(window(text, terms, limit), terms)
