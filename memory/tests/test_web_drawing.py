"""The pieces of the memory pages that need no database: snippets and marks, facts grouped and
put on a timeline, and the neighbourhood drawing."""

from __future__ import annotations

import math
import re
from datetime import UTC, date, datetime

from memory.web.facts import FactRow, grouped, timeline
from memory.web.graph_svg import MOST, Edge, Node, neighbourhood
from memory.web.highlight import query_terms, snippet, window


def test_query_terms_leave_out_common_words_unless_nothing_else_is_left():
    assert query_terms("Who is the head of Support?") == ["support", "head"]
    assert query_terms("who is") == ["who", "is"]


def test_a_snippet_marks_words_that_start_with_a_query_term_and_escapes_the_rest():
    marked = snippet("The <b>pricing</b> page & prices", "price")
    assert str(marked) == "The &lt;b&gt;pricing&lt;/b&gt; page &amp; <mark>prices</mark>"
    assert str(snippet("<script>alert(1)</script> the launch", "launch")) == (
        "&lt;script&gt;alert(1)&lt;/script&gt; the <mark>launch</mark>"
    )


def test_a_long_passage_is_cut_around_its_first_match():
    text = "word " * 200 + "Lisbon office " + "tail " * 200
    cut = window(text, ["lisbon"], limit=120)
    assert cut.startswith("…")
    assert cut.endswith("…")
    assert "Lisbon office" in cut
    assert len(cut) <= 122


def row(memory_id: str, relation: str, *, replaced: bool = False, day: int = 1, **kw: object) -> FactRow:
    return FactRow(
        memory_id=memory_id,
        statement=f"statement {memory_id}",
        kind="fact",
        relation=relation,
        subject=None,
        object=None,
        valid_from=kw.get("valid_from"),  # type: ignore[arg-type]
        valid_to=kw.get("valid_to"),  # type: ignore[arg-type]
        recorded_at=datetime(2026, 1, day, tzinfo=UTC),
        replaced=replaced,
        replaced_at=datetime(2026, 2, 1, tzinfo=UTC) if replaced else None,
        replaced_by=None,
        source=None,
    )


def test_facts_are_grouped_by_relation_with_current_ones_first():
    rows = [row("mem_1", "head_of", replaced=True, day=1), row("mem_2", "head_of", day=2),
            row("mem_3", "", day=3), row("mem_4", "office_in", replaced=True, day=4)]  # fmt: skip
    groups = grouped(rows)
    assert [(g.label, [r.memory_id for r in g.rows]) for g in groups] == [
        ("head of", ["mem_2", "mem_1"]), ("other statements", ["mem_3"]), ("office in", ["mem_4"]),
    ]  # fmt: skip


def test_the_timeline_puts_world_and_memory_dates_in_order():
    events = timeline([row("mem_1", "head_of", replaced=True, valid_from=date(2025, 1, 1), valid_to=date(2026, 3, 1))])
    assert [(e.day.isoformat(), e.what, e.timeline) for e in events] == [
        ("2025-01-01", "became true", "world"),
        ("2026-01-01", "memory learned it", "memory"),
        ("2026-02-01", "memory replaced it", "memory"),
        ("2026-03-01", "stopped being true", "world"),
    ]


def node(key: int, name: str | None = None) -> Node:
    return Node(key, name or f"Entity {key}", f"/memory/entities/{key}/")


def test_the_drawing_links_every_node_and_escapes_names_and_relations():
    centre = node(1, "Acme")
    drawing = neighbourhood(centre=centre, edges=[Edge(centre, node(2, '<script>"x"</script>'), "<b>owns</b>")])
    svg = str(drawing.svg)
    assert drawing.shown == 1
    assert drawing.left_out == 0
    assert svg.count("<a href=") == 2
    assert '<a href="/memory/entities/2/" class="node">' in svg
    assert "<script>" not in svg
    assert "&lt;script&gt;&quot;x&quot;&lt;/script&gt;" in svg
    assert "<b>" not in svg
    assert "&lt;b&gt;owns&lt;/b&gt;" in svg


def positions(svg: str) -> dict[str, tuple[float, float]]:
    link = r'<a href="/memory/entities/(\d+)/"[^>]*><title>[^<]*</title><rect [^>]*/>'
    found = re.findall(link + r'<circle cx="([\d.]+)" cy="([\d.]+)"', svg)
    return {key: (float(x), float(y)) for key, x, y in found}


def test_two_hops_sit_on_an_outer_ring_next_to_the_neighbour_that_leads_there():
    centre, near, far = node(1), node(2), node(3)
    svg = str(neighbourhood(centre=centre, edges=[Edge(centre, near, "a"), Edge(near, far, "b")], depth=2).svg)
    spots = positions(svg)
    (cx, cy), (nx, ny), (fx, fy) = spots["1"], spots["2"], spots["3"]
    assert math.dist((cx, cy), (fx, fy)) > math.dist((cx, cy), (nx, ny))
    assert math.isclose(math.atan2(ny - cy, nx - cx), math.atan2(fy - cy, fx - cx), abs_tol=0.01)
    one_hop = str(neighbourhood(centre=centre, edges=[Edge(centre, near, "a"), Edge(near, far, "b")], depth=1).svg)
    assert "/memory/entities/3/" not in one_hop


def test_a_crowded_neighbourhood_draws_a_ring_full_and_counts_the_rest():
    centre = node(1)
    drawing = neighbourhood(centre=centre, edges=[Edge(centre, node(k), "knows") for k in range(2, 40)])
    assert drawing.shown == MOST[1]
    assert drawing.left_out == 38 - MOST[1]
