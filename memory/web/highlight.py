"""Snippets of a passage around the words of a query, with those words marked.

Everything is escaped here, piece by piece, before the ``<mark>`` tags are put around the
matches, so the result is safe to insert into a page as it is."""

from __future__ import annotations

import re

from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

from memory.search.snippets import SNIPPET_CHARS, best_part, query_terms, term_pattern

__all__ = ["SNIPPET_CHARS", "highlight", "query_terms", "snippet", "window"]


def _pattern(terms: list[str]) -> re.Pattern[str] | None:
    return term_pattern(terms)


def window(text: str, terms: list[str], limit: int = SNIPPET_CHARS) -> str:
    """The part of ``text`` to show for ``terms`` (``memory.search.snippets.best_part``)."""
    return best_part(text, terms, limit)


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
