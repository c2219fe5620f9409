"""Search, the home page of a signed-in member: the passages ``search_company_memory`` finds for
the viewer, one per document, cut where the evidence ends, under an answer card
(``memory.search.answer``: the line that answers, its source and date, and the sources that say
otherwise) with the facts behind it (disputed ones marked and linked to their contradiction),
and filters that are part of the URL.

The card is built from the tool's own passages, as ``ask_company_memory`` builds its own from the
same search, so the two never disagree. The filters (a kind of source, a person who said it, a
range of days, a category) are the tool's own arguments, applied inside the search's SQL; "as of"
reads what the sources had said by the end of that day (``by=said``, as the entity page does) or
what Brain had learned by then (``by=learned``)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import date, datetime
from typing import cast
from urllib.parse import urlencode

from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import User
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.utils.safestring import SafeString

from brain.core.actors import Actor
from brain.faces.web import member_organisations, web_actor
from brain.infra.ids import parse_numeric_id
from memory.documents.selectors import memory_is_empty, visible_chunks
from memory.graph.provenance import facts_behind
from memory.mcp_tools.documents import SearchOut
from memory.mcp_tools.graph import open_contradictions
from memory.mcp_tools.shapes import fact_outs
from memory.search.answer import Statement, answer_card
from memory.web.common import day_of, run_tool, web_link
from memory.web.facts import FactRow, fact_rows
from memory.web.highlight import snippet

FOUND = 20  # what one call of the tool may ask for: the filters narrow these
SHOWN = 10
FILTERS = ("kind", "person", "after", "before", "category")


@dataclass(frozen=True)
class Result:
    chunk_id: int
    document_id: int
    text: str
    title: str
    heading: str
    url: str
    source: str
    source_url: str | None
    when: datetime | None
    speaker: str
    category: str
    snippet: SafeString
    facts: list[FactRow]
    more: int
    copies: int = 0  # other documents saying the same, folded into this one
    stale_since: date | None = None  # its document is past its review date (the tool's hit says so)


@dataclass(frozen=True)
class Said:
    """One statement of the answer card, as the page shows it."""

    value: str
    sentence: str
    title: str
    url: str
    speaker: str
    when: datetime | None
    later: bool = False
    stale_since: date | None = None  # its document is past its review date


@dataclass(frozen=True)
class CardView:
    status: str
    asked: str
    line: str
    answer: Said | None
    others: list[Said]
    facts: list[FactRow]


@dataclass(frozen=True)
class Choice:
    value: str
    count: int
    chosen: bool


@login_required
def search_page(request: HttpRequest) -> HttpResponse:
    actor = web_actor(request)
    query = request.GET.get("q", "").strip()
    as_of = request.GET.get("as_of", "").strip()
    by = "learned" if request.GET.get("by") == "learned" else "said"
    chosen = {name: request.GET.get(name, "").strip() for name in FILTERS}
    context: dict[str, object] = {
        "query": query,
        "as_of": as_of,
        "by": by,
        "chosen": chosen,
        "org": actor.org,
        "orgs": list(member_organisations(cast(User, request.user))),
        "results": None,
        "refusal": "",
        "memory_empty": memory_is_empty(actor=actor),
    }
    status = 200
    wrong = _wrong_days(chosen)
    if query and wrong:
        context["refusal"], status = wrong, 400
    elif query:
        arguments = {
            "query": query,
            "top_k": FOUND,
            "as_of": as_of or None,
            "as_of_by": by,
            # The filters are the search's own (in the SQL of every retriever), not a cut of its top twenty.
            "source_kind": chosen["kind"] or None,
            "said_by": chosen["person"] or None,
            "category": chosen["category"] or None,
            "after": chosen["after"] or None,
            "before": chosen["before"] or None,
        }
        outcome = run_tool(actor, "search_company_memory", arguments)
        if outcome.output is None:
            context["refusal"], status = outcome.message, outcome.status
        else:
            found = _results(actor, cast(SearchOut, outcome.output), query, day_of(as_of))
            kept = {"q": query, "as_of": as_of, **({"by": by} if as_of and by != "said" else {})}
            context.update(
                results=found[:SHOWN],
                card=_card(query, found) if found else None,
                filtered=any(chosen.values()),
                found=len(found),
                kinds=_choices(found, "source", chosen["kind"]),
                people=_choices(found, "speaker", chosen["person"]),
                categories=_choices(found, "category", chosen["category"]),
                clear_url=f"{reverse('memory-search')}?{urlencode(kept)}",
            )
    return render(request, "memory/search.html", context, status=status)


def _wrong_days(chosen: dict[str, str]) -> str:
    """Why the day filters cannot be used, or "" when they can: a filter is never silently dropped."""
    labels = {"after": "From", "before": "To"}
    for name, label in labels.items():
        if chosen[name] and day_of(chosen[name]) is None:
            return f"{label} must be a day written YYYY-MM-DD, e.g. 2026-03-01; got {chosen[name]!r}."
    after, before = day_of(chosen["after"]), day_of(chosen["before"])
    if after and before and after > before:
        return f"From ({after}) is after To ({before}); swap them or clear one."
    return ""


def _choices(results: list[Result], field: str, chosen: str) -> list[Choice]:
    counts: dict[str, int] = {}
    for result in results:
        value = getattr(result, field)
        if value:
            counts[value] = counts.get(value, 0) + 1
    if chosen and chosen not in counts:
        counts[chosen] = 0
    return [Choice(value, count, value == chosen) for value, count in sorted(counts.items(), key=lambda c: -c[1])]


def _results(actor: Actor, found: SearchOut, query: str, as_of: date | None) -> list[Result]:
    keys = [
        (parse_numeric_id(h.chunk_id, "chunk") or 0, parse_numeric_id(h.document_id, "doc") or 0) for h in found.hits
    ]
    chunks = visible_chunks(actor=actor, ids=[chunk for chunk, _ in keys])
    behind = facts_behind(actor=actor, passages=keys, as_of=as_of)
    disputes = open_contradictions(actor, {f.pk for fs in behind.values() for f in fs})
    public = {f.public_id: f.pk for fs in behind.values() for f in fs}
    rows = {
        row.memory_id: replace(row, disputes=tuple(disputes.get(public.get(row.memory_id, 0), ())))
        for row in fact_rows(fact_outs(actor, [f for fs in behind.values() for f in fs], as_of=as_of))
    }
    results = []
    for hit, (chunk_id, document_id) in zip(found.hits, keys, strict=True):
        chunk = chunks.get(chunk_id)
        document = chunk.document if chunk else None
        # The same date the answer card of ask_company_memory gives (``evidence.said_when``).
        when = hit.said_at or (document.occurred_at or chunk.recorded_at if document and chunk else None)
        results.append(
            Result(
                chunk_id=chunk_id,
                document_id=document_id,
                text=chunk.text if chunk else hit.snippet,
                title=hit.title,
                heading=chunk.heading if chunk else "",
                url=reverse("memory-document", args=[document_id]) + (f"#passage-{chunk_id}" if chunk else ""),
                source=document.source_kind if document else "",
                source_url=web_link(hit.external_url),
                when=when,
                speaker=hit.speaker or "",
                category=document.category.name if document and document.category_id else "",
                snippet=snippet(chunk.text if chunk else hit.snippet, query),
                facts=[rows[f.public_id] for f in behind.get(chunk_id, []) if f.public_id in rows],
                more=hit.more_in_document,
                copies=len(hit.also_in),
                stale_since=hit.stale_since,
            )
        )
    return results


def _card(query: str, results: list[Result]) -> CardView:
    """The answer card (``memory.search.answer``) read from the results, best first."""
    card = answer_card(query, results, [r.when for r in results])
    by_chunk = {r.chunk_id: r for r in results}
    answer = _said(card.answer, by_chunk) if card.answer else None
    later = {id(s) for s in card.later}
    others = [_said(s, by_chunk, later=id(s) in later) for s in card.others]
    source = by_chunk.get(card.answer.chunk_id) if card.answer else None
    return CardView(card.status, card.asked, card.line, answer, others, source.facts if source else [])


def _said(statement: Statement, by_chunk: dict[int, Result], *, later: bool = False) -> Said:
    result = by_chunk.get(statement.chunk_id)
    return Said(
        value=statement.value,
        sentence=statement.sentence,
        title=statement.title,
        url=result.url if result else reverse("memory-document", args=[statement.document_id]),
        speaker=statement.speaker,
        when=statement.when,
        later=later,
        stale_since=result.stale_since if result else None,
    )
