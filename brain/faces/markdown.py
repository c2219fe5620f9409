"""Markdown written by people or assistants, shown on Brain's pages: CommonMark with raw HTML
off, so a ``<script>`` or an ``onerror`` in the text is shown as text and never runs, and with
images off, so opening a page never fetches a picture from wherever the text points (a skill
under review could otherwise tell its author who read it, and when)."""

from __future__ import annotations

from django.utils.safestring import SafeString, mark_safe
from markdown_it import MarkdownIt

_MARKDOWN = MarkdownIt("commonmark", {"html": False, "linkify": False}).disable("image")


def render_markdown(text: str) -> SafeString:
    """HTML for ``text``; markdown-it escapes every piece of it, and raw HTML is off."""
    return mark_safe(_MARKDOWN.render(text))  # noqa: S308 (raw HTML is off; markdown-it escapes the rest)


def render_inline(text: str) -> SafeString:
    """HTML for the inline markdown of one line or paragraph (emphasis, code, links), with the same
    rules as ``render_markdown``: markdown-it escapes every piece of it, and raw HTML is off."""
    return mark_safe(_MARKDOWN.renderInline(text))  # noqa: S308 (raw HTML is off; markdown-it escapes the rest)
