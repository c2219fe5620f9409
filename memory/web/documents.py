"""A document: its text (through ``retrieve_company_memory``), passages, facts, entities, versions
and status. One the viewer may not read is answered exactly as one that does not exist."""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.safestring import SafeString

from brain.errors import NotFound
from brain.markdown import render_markdown
from brain.mcp.meter import OutOfCredits
from brain.web import web_actor
from memory.documents.placement import may_delete, may_make_personal
from memory.documents.selectors import get_document, list_passages, list_versions
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
    entities = entity_views(actor=actor, entity_ids=document_entity_ids(actor=actor, document=document))
    return render(
        request,
        "memory/document.html",
        {
            "document": document,
            "page": pages[0] if pages else None,
            "text_html": _as_markdown(document, pages[0].content) if pages else None,
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
