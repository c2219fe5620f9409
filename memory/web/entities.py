"""An entity as the viewer may see it (``explore_entity``): its name, type, aliases and summary,
its current facts grouped by what their relation means, the replaced ones after them, their
timeline (when each was said, true, learned and replaced), the documents that name it, and its
neighbourhood drawn in SVG (each node a link; ``static/memory/graph.js`` adds pan and zoom).

``as_of`` shows the entity as its sources stood at the end of that day (``by=said``, the
default: an imported archive's history is there however recently it was loaded), or as memory
believed it then (``by=learned``: what Brain had taken in by that day)."""

from __future__ import annotations

from dataclasses import replace
from datetime import date
from typing import cast
from urllib.parse import urlencode

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse

from brain.core.actors import Actor
from brain.faces.times import local_day
from brain.faces.web import web_actor
from brain.infra.ids import format_id, parse_numeric_id
from memory.documents.selectors import visible_documents
from memory.graph.provenance import documents_mentioning
from memory.graph.reads import parse_memory_id, said_by_then
from memory.mcp_tools.graph import ExploreOut
from memory.mcp_tools.shapes import EntityRef, FactOut
from memory.models import Document
from memory.search.filters import day_end
from memory.web.common import day_of, message_page, run_tool
from memory.web.facts import FactRow, fact_rows, grouped, relation_words, timeline
from memory.web.graph_svg import Drawing, Edge, Node, neighbourhood

MOST_FACTS = 50  # explore_entity's largest limit


@login_required
def entity_page(request: HttpRequest, entity_id: int) -> HttpResponse:
    actor = web_actor(request)
    as_of = request.GET.get("as_of", "").strip()
    by = "learned" if request.GET.get("by") == "learned" else "said"
    depth = 2 if request.GET.get("depth") == "2" else 1
    ref = format_id("ent", entity_id)
    learned = as_of if by == "learned" else ""  # the day handed to the tool: what memory believed then
    explore = {"entity": ref, "limit": MOST_FACTS, "as_of": learned or None}
    outcome = run_tool(actor, "explore_entity", {**explore, "depth": 1, "include_superseded": True})
    if outcome.output is None:
        title = "Entity not found" if outcome.code == "not_found" else "Entity"
        return message_page(request, title=title, message=outcome.message, status=outcome.status)
    hood = cast(ExploreOut, outcome.output)
    said = day_of(as_of) if by == "said" else None
    # At one hop every fact touches the entity; kept explicit, as wider walks return more.
    own = [f for f in [*hood.outgoing, *hood.incoming] if _touches(f, ref)]
    rows = _as_said_by(actor, _with_said_days(actor, fact_rows(own)), said)
    standing = {row.memory_id for row in rows if not row.replaced}
    around, notice = [f for f in own if f.memory_id in standing], ""
    if depth == 2:
        wider = run_tool(actor, "explore_entity", {**explore, "depth": 2, "include_superseded": said is not None})
        if wider.output is None:
            notice = wider.message
        else:
            shown = cast(ExploreOut, wider.output)
            around = [*shown.outgoing, *shown.incoming, *shown.further]
            if said is not None:
                kept = {
                    r.memory_id
                    for r in _as_said_by(actor, _with_said_days(actor, fact_rows(around)), said)
                    if not r.replaced
                }
                around = [f for f in around if f.memory_id in kept]
    context = {
        "entity": hood.entity,
        "entity_id": entity_id,
        "as_of": as_of,
        "by": by,
        "depth": depth,
        "groups": grouped([row for row in rows if not row.replaced]),
        "replaced": grouped([row for row in rows if row.replaced]),
        "events": timeline(rows),
        "truncated": hood.truncated,
        "graph": _drawing(hood.entity.name, entity_id, around, depth, _same_view(as_of, by, depth)),
        "graph_notice": notice,
        "documents": _dated_by(
            actor, documents_mentioning(actor=actor, entity_id=entity_id, as_of=day_of(learned)), said
        ),
    }
    return render(request, "memory/entity.html", context)


def _with_said_days(actor: Actor, rows: list[FactRow]) -> list[FactRow]:
    """Rows with the day their source is dated (when it was said or written), where it has one."""
    keys = {row.memory_id: row.source_document for row in rows if row.source_document}
    documents = visible_documents(actor=actor, ids=list(keys.values()))
    dated = {key: d.occurred_at for key, d in documents.items() if d.occurred_at is not None}
    days = {memory_id: local_day(dated[key], actor.org) for memory_id, key in keys.items() if key in dated}
    return [replace(row, said_on=days.get(row.memory_id)) for row in rows]


def _dated_by(actor: Actor, documents: list[Document], day: date | None) -> list[Document]:
    """The documents said or written by the end of ``day`` (saved by then, when they carry no date)."""
    if day is None:
        return documents
    return [d for d in documents if local_day(d.occurred_at or d.recorded_at, actor.org) <= day]


def _as_said_by(actor: Actor, rows: list[FactRow], day: date | None) -> list[FactRow]:
    """The rows as the sources stood at the end of ``day`` (``memory.access``, "What the sources had
    said by a moment"): what had been said by then, shown as replaced only when what replaced it
    had been said by then too."""
    if day is None:
        return rows
    ids = {parse_memory_id(row.memory_id): row for row in rows}
    said = said_by_then(actor=actor, ids=list(ids), moment=day_end(day, actor.org))
    return [
        row if not said[pk] else replace(row, replaced=False, replaced_at=None, replaced_by=None)
        for pk, row in ids.items()
        if pk in said
    ]


def _touches(fact: FactOut, ref: str) -> bool:
    return any(end is not None and end.entity_id == ref for end in (fact.subject, fact.object))


def _same_view(as_of: str, by: str, depth: int) -> str:
    """The query string that keeps the day, how it is read and the depth when moving to a neighbour."""
    pairs = (("as_of", as_of), ("by", by if as_of and by != "said" else ""), ("depth", str(depth) if depth > 1 else ""))
    wanted = {k: v for k, v in pairs if v}
    return f"?{urlencode(wanted)}" if wanted else ""


def _node(ref: EntityRef, view: str) -> Node | None:
    key = parse_numeric_id(ref.entity_id, "ent")
    return Node(key, ref.name, reverse("memory-entity", args=[key]) + view) if key else None


def _drawing(name: str, entity_id: int, facts: list[FactOut], depth: int, view: str) -> Drawing:
    centre = Node(entity_id, name, reverse("memory-entity", args=[entity_id]) + view)
    edges = []
    for fact in facts:
        ends = [_node(e, view) if e else None for e in (fact.subject, fact.object)]
        if ends[0] is not None and ends[1] is not None:
            edges.append(Edge(ends[0], ends[1], relation_words(fact.relation or "")))
    return neighbourhood(centre=centre, edges=edges, depth=depth)
