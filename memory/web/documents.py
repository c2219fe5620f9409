"""A document: its text (through ``retrieve_company_memory``), passages, facts, entities, versions
and status. One the viewer may not read is answered exactly as one that does not exist."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import cast

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.safestring import SafeString

from brain.core.errors import NotFound
from brain.faces.markdown import render_inline, render_markdown
from brain.faces.web import web_actor
from brain.mcp.meter import OutOfCredits
from memory.documents.block_rows import load_blocks
from memory.documents.placement import may_delete, may_make_personal
from memory.documents.selectors import get_document, list_passages, list_versions
from memory.extraction import Block, Kind
from memory.graph.entity_views import entity_views
from memory.graph.provenance import document_entity_ids, document_facts
from memory.mcp_tools.documents import RetrieveOut
from memory.mcp_tools.shapes import fact_outs
from memory.models import Document
from memory.web.common import message_page, run_tool, web_link
from memory.web.facts import fact_rows
from memory.web.reviews import review_context

MAX_CHARS = 50_000  # the most retrieve_company_memory gives of one page


@dataclass(frozen=True)
class Version:
    document: Document
    replaced_by: Document | None  # when the viewer may read what replaced it


def _versions(chain: list[Document]) -> list[Version]:
    by_pk = {d.pk: d for d in chain}
    return [Version(d, by_pk.get(d.superseded_by_id or 0)) for d in chain]


def _as_markdown(document: Document, text: str) -> SafeString | None:
    """A written document's text rendered (raw HTML off, ``brain.faces.markdown``); None for plain text
    and messages, shown as they were typed."""
    if document.content_type not in MARKDOWN_TYPES or document.speaker:
        return None
    return render_markdown(text)


MARKDOWN_TYPES = ("text/markdown", "text/html")  # HTML is kept as markdown when saved


@dataclass
class Part:
    """A piece of the page that shows a document's text: one block, or the run of list items or table
    rows that make one list or one table. Words are shown as written: a markdown document's inline
    markup rendered (``brain.faces.markdown``), a plain text's lines as typed."""

    kind: str  # heading, paragraph, lead, list, table, quote, code, meta, turn
    text: str | SafeString = ""
    level: int = 0  # a heading's depth, as its HTML tag (h3 for the outermost)
    items: list[str | SafeString] = field(default_factory=list)
    header: tuple[str, ...] = ()
    rows: list[tuple[str, ...]] = field(default_factory=list)
    speaker: str = ""
    said: str = ""


# Structure shown apart, muted: a mail's header lines, greetings, sign-offs, signatures.
_MUTED = {Kind.META: "meta", Kind.SIGNATURE: "meta", Kind.GREETING: "meta"}
# The markers a block's own lines open with, left out when its words are shown.
_MARKERS = {
    Kind.HEADING: re.compile(r"^[ \t]{0,3}#{1,6}[ \t]*|[ \t]+#+[ \t]*$", re.M),
    Kind.ITEM: re.compile(r"^[ \t]*(?:[-*+•]|\d{1,9}[.)])[ \t]+(?:\[[ xX]\][ \t]+)?"),
    Kind.QUOTE: re.compile(r"^[ \t]*(?:>[ \t]?)+", re.M),
}
_AS_WRITTEN = frozenset({Kind.HEADING, Kind.PARAGRAPH, Kind.LEAD, Kind.ITEM})


def _words(block: Block, content: str, markdown: bool) -> str | SafeString:
    """What a block says, as written where its span holds it: rendered inline markdown, or the
    plain text's own lines; the block's read words otherwise."""
    raw = content[block.start : block.end]
    if not raw.strip() or (block.kind not in _AS_WRITTEN and not (markdown and block.kind == Kind.QUOTE)):
        return block.text
    marker = _MARKERS.get(block.kind)
    raw = marker.sub("", raw) if marker is not None else raw
    return render_inline(raw.strip()) if markdown else raw.strip()


def shown_parts(blocks: list[Block], content: str, *, markdown: bool, up_to: int | None = None) -> list[Part]:
    """The parts that show ``blocks`` of ``content``: consecutive items of one lead-in as one list,
    consecutive rows of one header (and the header itself) as one table. ``up_to``: only blocks
    that end within the first so many characters (a page cut short)."""
    parts: list[Part] = []
    for block in blocks:
        if up_to is not None and block.end > up_to:
            break
        last = parts[-1] if parts else None
        if block.kind == Kind.META and block.header:
            parts.append(Part("table", header=block.header))
        elif block.kind == Kind.ROW:
            if last is None or last.kind != "table" or last.header != block.header:
                last = Part("table", header=block.header)
                parts.append(last)
            last.rows.append(block.cells)
        elif block.kind == Kind.ITEM:
            if last is None or last.kind != "list" or last.text != block.lead:
                last = Part("list", text=block.lead)
                parts.append(last)
            last.items.append(_words(block, content, markdown))
        elif block.kind == Kind.HEADING:
            level = min(2 + max(len(block.path), 1), 6)
            parts.append(Part("heading", _words(block, content, markdown), level=level))
        elif block.kind == Kind.TURN:
            parts.append(Part("turn", block.text, speaker=block.speaker, said=block.said))
        else:
            parts.append(Part(_MUTED.get(block.kind, block.kind.value), _words(block, content, markdown)))
    return parts


@login_required
def document_page(request: HttpRequest, document_id: int) -> HttpResponse:
    actor = web_actor(request)
    try:
        document = get_document(actor=actor, document_id=document_id)
        outcome = run_tool(
            actor,
            "retrieve_company_memory",
            {"document_ids": [document.public_id], "max_chars_per_document": MAX_CHARS},
        )
        if outcome.output is not None and not cast(RetrieveOut, outcome.output).pages:
            get_document(actor=actor, document_id=document_id)  # gone since: raises NotFound like the first read
    except NotFound as exc:
        return message_page(request, title="Document not found", message=exc.message, status=404)
    if outcome.output is None:  # a read that was not paid for shows nothing of the document, not even its title
        title = "Out of credits" if outcome.code == OutOfCredits.code else document.title
        return message_page(request, title=title, message=outcome.message, status=outcome.status)
    pages = cast(RetrieveOut, outcome.output).pages
    page = pages[0] if pages else None
    # The blocks ingestion kept (none yet for a document still queued, or one ingested before they
    # were kept: its text is shown as before). Only what the read returned is shown: a page cut at
    # MAX_CHARS shows the blocks within the cut.
    parts = shown_parts(
        load_blocks(document.pk),
        document.content,
        markdown=document.content_type in MARKDOWN_TYPES and not document.speaker,
        up_to=len(page.content) if page and page.truncated else None,
    )
    entities = entity_views(actor=actor, entity_ids=document_entity_ids(actor=actor, document=document))
    return render(
        request,
        "memory/document.html",
        {
            "document": document,
            "page": page,
            "parts": parts if page else [],
            "text_html": _as_markdown(document, page.content) if page and not parts else None,
            "source_url": web_link(document.source_url),
            "passages": list_passages(actor=actor, document=document),
            "facts": fact_rows(fact_outs(actor, document_facts(actor=actor, document=document))),
            "entities": sorted(entities.values(), key=lambda v: v.name.casefold()),
            "versions": _versions(list_versions(actor=actor, document=document)),
            "may_delete": may_delete(actor, document),
            "may_make_personal": may_make_personal(actor, document),
            "org": actor.org,
            **review_context(actor, document),
        },
    )
