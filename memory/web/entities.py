"""An entity as the viewer may see it (``explore_entity``): its name, type, aliases and summary,
its facts by relation with the replaced ones marked, their timeline, the documents that name it,
and its neighbourhood drawn in SVG. ``as_of`` shows what memory believed at the end of that day."""

from __future__ import annotations

from typing import cast
from urllib.parse import urlencode

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse

from brain.ids import format_id, parse_numeric_id
from brain.web import web_actor
from memory.graph.provenance import documents_mentioning
from memory.mcp_tools.graph import ExploreOut
from memory.mcp_tools.shapes import EntityRef, FactOut
from memory.web.common import day_of, message_page, run_tool
from memory.web.facts import fact_rows, grouped, timeline
from memory.web.graph_svg import Drawing, Edge, Node, neighbourhood

MOST_FACTS = 50  # explore_entity's largest limit


@login_required
def entity_page(request: HttpRequest, entity_id: int) -> HttpResponse:
    actor = web_actor(request)
    as_of = request.GET.get("as_of", "").strip()
    depth = 2 if request.GET.get("depth") == "2" else 1
    ref = format_id("ent", entity_id)
    explore = {"entity": ref, "limit": MOST_FACTS, "as_of": as_of or None}
    outcome = run_tool(actor, "explore_entity", {**explore, "depth": 1, "include_superseded": True})
    if outcome.output is None:
        title = "Entity not found" if outcome.code == "not_found" else "Entity"
        return message_page(request, title=title, message=outcome.message, status=outcome.status)
    hood = cast(ExploreOut, outcome.output)
    # At one hop every fact touches the entity; kept explicit, as wider walks return more.
    own = [f for f in [*hood.outgoing, *hood.incoming] if _touches(f, ref)]
    rows = fact_rows(own)
    around, notice = [f for f in own if not f.superseded], ""
    if depth == 2:
        wider = run_tool(actor, "explore_entity", {**explore, "depth": 2})
        if wider.output is None:
            notice = wider.message
        else:
            shown = cast(ExploreOut, wider.output)
            around = [*shown.outgoing, *shown.incoming, *shown.further]
    context = {
        "entity": hood.entity,
        "entity_id": entity_id,
        "as_of": as_of,
        "depth": depth,
        "groups": grouped(rows),
        "events": timeline(rows),
        "truncated": hood.truncated,
        "graph": _drawing(hood.entity.name, entity_id, around, depth, _same_view(as_of, depth)),
        "graph_notice": notice,
        "documents": documents_mentioning(actor=actor, entity_id=entity_id, as_of=day_of(as_of)),
    }
    return render(request, "memory/entity.html", context)


def _touches(fact: FactOut, ref: str) -> bool:
    return any(end is not None and end.entity_id == ref for end in (fact.subject, fact.object))


def _same_view(as_of: str, depth: int) -> str:
    """The query string that keeps the day and the depth when moving to a neighbour."""
    wanted = {k: v for k, v in (("as_of", as_of), ("depth", str(depth) if depth > 1 else "")) if v}
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
            edges.append(Edge(ends[0], ends[1], fact.relation or ""))
    return neighbourhood(centre=centre, edges=edges, depth=depth)
