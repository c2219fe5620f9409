"""Search: the passages ``search_company_memory`` finds for the viewer, each with a snippet around
the query's words and the facts behind it with their validity."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime
from typing import cast

from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import User
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.utils.safestring import SafeString

from brain.actors import Actor
from brain.ids import parse_numeric_id
from brain.web import member_organisations, web_actor
from memory.documents.selectors import memory_is_empty, visible_chunks
from memory.graph.provenance import facts_behind
from memory.mcp_tools.documents import SearchOut
from memory.mcp_tools.shapes import fact_outs
from memory.web.common import day_of, run_tool, web_link
from memory.web.facts import FactRow, fact_rows
from memory.web.highlight import snippet

TOP_K = 10


@dataclass(frozen=True)
class Result:
    title: str
    heading: str
    url: str
    source: str
    source_url: str | None
    when: datetime | None
    speaker: str
    snippet: SafeString
    facts: list[FactRow]


@login_required
def search_page(request: HttpRequest) -> HttpResponse:
    actor = web_actor(request)
    query = request.GET.get("q", "").strip()
    as_of = request.GET.get("as_of", "").strip()
    context = {
        "query": query,
        "as_of": as_of,
        "org": actor.org,
        "orgs": list(member_organisations(cast(User, request.user))),
        "results": None,
        "refusal": "",
        "memory_empty": memory_is_empty(actor=actor),
    }
    status = 200
    if query:
        outcome = run_tool(actor, "search_company_memory", {"query": query, "top_k": TOP_K, "as_of": as_of or None})
        if outcome.output is None:
            context["refusal"], status = outcome.message, outcome.status
        else:
            context["results"] = _results(actor, cast(SearchOut, outcome.output), query, day_of(as_of))
    return render(request, "memory/search.html", context, status=status)


def _results(actor: Actor, found: SearchOut, query: str, as_of: date | None) -> list[Result]:
    keys = [
        (parse_numeric_id(h.chunk_id, "chunk") or 0, parse_numeric_id(h.document_id, "doc") or 0) for h in found.hits
    ]
    chunks = visible_chunks(actor=actor, ids=[chunk for chunk, _ in keys])
    behind = facts_behind(actor=actor, passages=keys, as_of=as_of)
    rows = {
        row.memory_id: row
        for row in fact_rows(fact_outs(actor, [f for fs in behind.values() for f in fs], as_of=as_of))
    }
    results = []
    for hit, (chunk_id, document_id) in zip(found.hits, keys, strict=True):
        chunk = chunks.get(chunk_id)
        document = chunk.document if chunk else None
        when = hit.said_at or (document.occurred_at or document.recorded_at if document else None)
        results.append(
            Result(
                title=hit.title,
                heading=chunk.heading if chunk else "",
                url=reverse("memory-document", args=[document_id]),
                source=document.source_kind if document else "",
                source_url=web_link(hit.external_url),
                when=when,
                speaker=hit.speaker or "",
                snippet=snippet(chunk.text if chunk else hit.snippet, query),
                facts=[rows[f.public_id] for f in behind.get(chunk_id, []) if f.public_id in rows],
            )
        )
    return results
