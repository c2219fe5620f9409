"""An entity's neighbourhood drawn as SVG on the server: no script, no library, nothing fetched.

The entity sits in the middle, the entities one hop away on a ring around it, those two hops
away on an outer ring next to the neighbour that leads to them. Each node is a link to its
entity's page. Every name and relation is escaped here before it becomes markup."""

from __future__ import annotations

import math
from dataclasses import dataclass

from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

WIDTH = 640
RING = {1: 150, 2: 265}  # ring radius per hop
MOST = {1: 12, 2: 18}  # nodes drawn per ring; the rest are left out (and counted)
LABEL_CHARS = 18
EDGE_LABELS_UP_TO = 12  # with more edges than this, relations are only in each line's tooltip


@dataclass(frozen=True)
class Node:
    key: int
    name: str
    url: str


@dataclass(frozen=True)
class Edge:
    source: Node
    target: Node
    relation: str


@dataclass(frozen=True)
class Drawing:
    svg: SafeString
    shown: int  # entities drawn besides the centre
    left_out: int  # entities in reach that did not fit


def _rings(centre: Node, edges: list[Edge], depth: int) -> tuple[dict[int, Node], dict[int, list[int]], list[int]]:
    """Nodes by key, each reached node's hop ring, and how many did not fit in each ring."""
    nodes = {centre.key: centre}
    around: dict[int, set[int]] = {}
    for edge in edges:
        if edge.source.key == edge.target.key:
            continue
        nodes.setdefault(edge.source.key, edge.source)
        nodes.setdefault(edge.target.key, edge.target)
        around.setdefault(edge.source.key, set()).add(edge.target.key)
        around.setdefault(edge.target.key, set()).add(edge.source.key)
    rings: dict[int, list[int]] = {}
    seen, frontier, left_out = {centre.key}, [centre.key], []
    for hop in range(1, depth + 1):
        reached = sorted(
            {n for f in frontier for n in around.get(f, ()) if n not in seen},
            key=lambda k: (nodes[k].name.casefold(), k),
        )
        seen |= set(reached)
        rings[hop], frontier = reached[: MOST[hop]], reached[: MOST[hop]]
        left_out.append(len(reached) - len(rings[hop]))
    return nodes, rings, left_out


def _place(centre: Node, rings: dict[int, list[int]], edges: list[Edge], height: int) -> dict[int, tuple[float, float]]:
    """Ring one evenly around the centre; each node of ring two next to the neighbour that leads
    to it, its siblings fanned out around that neighbour's direction."""
    cx, cy = WIDTH / 2, height / 2
    spot = {centre.key: (cx, cy)}
    angle: dict[int, float] = {}
    for i, key in enumerate(rings.get(1, [])):
        angle[key] = -math.pi / 2 + 2 * math.pi * i / len(rings[1])
    outer = rings.get(2, [])
    if outer:
        children: dict[int, list[int]] = {}
        for key in outer:
            parent = next((p for p in rings[1] if _linked(edges, p, key)), rings[1][0])
            children.setdefault(parent, []).append(key)
        step = min(2 * math.pi / len(outer), 0.45)
        for parent, keys in children.items():
            for j, key in enumerate(keys):
                angle[key] = angle[parent] + (j - (len(keys) - 1) / 2) * step
    for key, a in angle.items():
        radius = RING[1] if key in rings.get(1, ()) else RING[2]
        spot[key] = (cx + radius * math.cos(a), cy + radius * math.sin(a))
    return spot


def _linked(edges: list[Edge], a: int, b: int) -> bool:
    return any({e.source.key, e.target.key} == {a, b} for e in edges)


def _label(name: str) -> str:
    return name if len(name) <= LABEL_CHARS else name[: LABEL_CHARS - 1].rstrip() + "…"


def neighbourhood(*, centre: Node, edges: list[Edge], depth: int = 1) -> Drawing:
    """The drawing of ``centre`` and what ``edges`` connect it to, up to ``depth`` hops (1 or 2)."""
    depth = 2 if depth >= 2 else 1
    nodes, rings, left_out = _rings(centre, edges, depth)
    height = 2 * RING[depth] + 90
    spot = _place(centre, rings, edges, height)
    lines: dict[tuple[int, int], list[str]] = {}
    for edge in edges:
        a, b = edge.source.key, edge.target.key
        if a in spot and b in spot and a != b:
            relations = lines.setdefault((min(a, b), max(a, b)), [])
            if edge.relation and edge.relation not in relations:
                relations.append(edge.relation)
    top = min(y for _, y in spot.values()) - 30  # only the rows in use: a lone neighbour needs no ring below
    tall = max(y for _, y in spot.values()) + 46 - top
    parts = [
        f'<svg class="graph" viewBox="0 {top:.0f} {WIDTH} {tall:.0f}" role="img" aria-labelledby="graph-title" '
        'xmlns="http://www.w3.org/2000/svg">',
        f'<title id="graph-title">Entities connected to {escape(centre.name)}</title>',
    ]
    for (a, b), relations in lines.items():
        (x1, y1), (x2, y2) = spot[a], spot[b]
        words = escape(", ".join(r.replace("_", " ") for r in relations))
        parts.append(
            f'<g class="edge"><title>{escape(nodes[a].name)} – {escape(nodes[b].name)}: {words}</title>'
            f'<line x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}"/>'
        )
        if words and len(lines) <= EDGE_LABELS_UP_TO:
            parts.append(f'<text x="{(x1 + x2) / 2:.1f}" y="{(y1 + y2) / 2 - 4:.1f}">{words}</text>')
        parts.append("</g>")
    for key, (x, y) in spot.items():
        node = nodes[key]
        role = "centre" if key == centre.key else "node"
        label = _label(node.name)
        half = max(18.0, 4.2 * len(label))  # the link's whole area takes the tap, gaps included
        parts.append(
            f'<a href="{escape(node.url)}" class="{role}"><title>{escape(node.name)}</title>'
            f'<rect class="hit" x="{x - half:.1f}" y="{y - 18:.1f}" width="{2 * half:.1f}" height="52"/>'
            f'<circle cx="{x:.1f}" cy="{y:.1f}" r="{14 if role == "centre" else 9}"/>'
            f'<text x="{x:.1f}" y="{y + 28:.1f}">{escape(label)}</text></a>'
        )
    parts.append("</svg>")
    shown = len(spot) - 1
    return Drawing(mark_safe("".join(parts)), shown, sum(left_out))  # noqa: S308 (every text is escaped)
