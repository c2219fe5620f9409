"""A document: its text (through ``retrieve_company_memory``), passages, facts, entities, versions
and status. One the viewer may not read is answered exactly as one that does not exist."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import cast

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.safestring import SafeString

from brain.errors import NotFound
from brain.markdown import render_markdown
from brain.mcp.meter import OutOfCredits
from brain.web import web_actor
from memory.documents.blocks import Block, Kind
from memory.documents.placement import may_delete, may_make_personal
from memory.documents.selectors import get_document, list_passages, list_versions
from memory.documents.source import shown_blocks
from memory.graph.entity_views import entity_views
from memory.graph.provenance import document_entity_ids, document_facts
from memory.mcp_tools.documents import RetrieveOut
from memory.mcp_tools.shapes import fact_outs
from memory.models import Document
from memory.web.common import message_page, run_tool, web_link
from memory.web.facts import fact_rows

MAX_CHARS = 50_000  # the most retrieve_company_memory gives of one page


@dataclass(frozen=True)
class Version:
    document: Document
    replaced_by: Document | None  # when the viewer may read what replaced it


def _versions(chain: list[Document]) -> list[Version]:
    by_pk = {d.pk: d for d in chain}
    return [Version(d, by_pk.get(d.superseded_by_id or 0)) for d in chain]


def _as_markdown(document: Document, text: str) -> SafeString | None:
    """A written document's text rendered (raw HTML off, ``brain.markdown``); None for plain text
    and messages, shown as they were typed."""
    if document.content_type not in MARKDOWN_TYPES or document.speaker:
        return None
    return render_markdown(text)


MARKDOWN_TYPES = ("text/markdown", "text/html")  # HTML is kept as markdown when saved


@dataclass
class Part:
    """A piece of the page that shows a document's text: one block, or the run of list items or table
    rows that make one list or one table."""

    kind: str  # heading, paragraph, lead, list, table, quote, code, meta, turn
    text: str = ""
    level: int = 0  # a heading's depth, as its HTML tag (h3 for the outermost)
    items: list[str] = field(default_factory=list)
    header: tuple[str, ...] = ()
    rows: list[tuple[str, ...]] = field(default_factory=list)
    speaker: str = ""
    said: str = ""


# Structure shown apart, muted: a mail's header lines, greetings, sign-offs, signatures.
_MUTED = {Kind.META: "meta", Kind.SIGNATURE: "meta", Kind.GREETING: "meta"}


def shown_parts(blocks: list[Block], *, up_to: int | None = None) -> list[Part]:
    """The parts that show ``blocks``: consecutive items of one lead-in as one list, consecutive rows
    of one header (and the header itself) as one table. ``up_to``: only blocks that end within the
    first so many characters (a page cut short)."""
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
            last.items.append(block.text)
        elif block.kind == Kind.HEADING:
            parts.append(Part("heading", block.text, level=min(2 + max(len(block.path), 1), 6)))
        elif block.kind == Kind.TURN:
            parts.append(Part("turn", block.text, speaker=block.speaker, said=block.said))
        else:
            parts.append(Part(_MUTED.get(block.kind, block.kind.value), block.text))
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
    # Only what the read returned is shown: a page cut at MAX_CHARS shows the blocks within the cut.
    parts = shown_parts(shown_blocks(document), up_to=len(page.content) if page and page.truncated else None)
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
        },
    )
