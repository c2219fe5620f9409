"""The SVG builders of the overview page: pure functions, checked on the SVG they return."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from overview.charts import (
    OTHER,
    Series,
    bar_chart,
    line_chart,
    nice_scale,
    stacked_bar_chart,
    top_and_other,
)

NS = {"svg": "http://www.w3.org/2000/svg"}
DAYS = ["1 Mar", "2 Mar", "3 Mar"]


def parsed(svg: str) -> ET.Element:
    return ET.fromstring(svg)  # noqa: S314 (our own output, parsed to check it is well formed)


def titles(root: ET.Element, tag: str) -> list[str]:
    return [el.findtext("svg:title", namespaces=NS) or "" for el in root.iter(f"{{{NS['svg']}}}{tag}")]


def calls_chart(series: list[Series]) -> ET.Element:
    return parsed(
        stacked_bar_chart(chart_id="c", title="Calls per day by tool", labels=DAYS, series=series, unit="calls")
    )


def test_each_bar_carries_its_day_tool_and_value_in_a_title():
    root = calls_chart([Series("search", [3, 0, 1], "#000"), Series("ask", [2, 4, 0], "#111")])
    bars = [t for t in titles(root, "rect") if t]
    assert bars == ["1 Mar: search 3 calls", "1 Mar: ask 2 calls", "2 Mar: ask 4 calls", "3 Mar: search 1 call"]


def test_a_days_segments_stack_up_to_its_total():
    root = calls_chart([Series("search", [3, 0, 0], "#000"), Series("ask", [1, 0, 0], "#111")])
    rects = [r for r in root.iter(f"{{{NS['svg']}}}rect") if r.get("class") == "bar"]
    heights = [float(r.get("height", 0)) for r in rects]
    assert heights[0] == 3 * heights[1]
    assert float(rects[1].get("y", 0)) + heights[1] == float(rects[0].get("y", 0))  # ask sits on search


def test_the_chart_is_labelled_for_assistive_technology_and_scales_by_its_viewbox():
    root = calls_chart([Series("search", [1, 2, 3], "#000")])
    assert root.get("role") == "img"
    assert root.findtext("svg:title", namespaces=NS) == "Calls per day by tool"
    assert root.get("aria-labelledby") == "c-title"
    desc = root.find("svg:desc", namespaces=NS)
    assert desc is not None
    assert desc.get("id") == root.get("aria-describedby")
    assert desc.text == "3 days; 6 calls in all; the most on 3 Mar (3)."
    assert re.fullmatch(r"0 0 \d+ \d+", root.get("viewBox", ""))
    assert root.get("width") is None
    assert root.get("height") is None


def test_tool_names_and_labels_are_escaped():
    hostile = '<script>alert("x")</script>&'
    svg = stacked_bar_chart(
        chart_id='c" onload="x', title=hostile, labels=[hostile], series=[Series(hostile, [1], "#000")], unit="calls"
    )
    root = parsed(svg)  # still well formed
    assert "<script>" not in svg
    assert 'onload="x"' not in svg
    assert root.findtext("svg:title", namespaces=NS) == hostile
    assert hostile in [t for t in titles(root, "g") if t]


def test_the_legend_names_every_series_and_shortens_long_names_with_the_full_name_on_hover():
    long_name = "retrieve_company_memory_" * 3
    root = calls_chart([Series("search", [1, 0, 0], "#000"), Series(long_name, [0, 1, 0], "#111")])
    items = [g for g in root.iter(f"{{{NS['svg']}}}g") if g.get("class") == "legend-item"]
    shown = [g.findtext("svg:text", namespaces=NS) for g in items]
    assert shown[0] == "search"
    assert shown[1] is not None
    assert shown[1].endswith("…")
    assert len(shown[1]) <= 44
    assert items[1].findtext("svg:title", namespaces=NS) == long_name


def legend_places(root: ET.Element) -> list[tuple[str, str]]:
    texts = [g.find("svg:text", namespaces=NS) for g in root.iter(f"{{{NS['svg']}}}g")]
    return [(t.get("x", ""), t.get("y", "")) for t in texts if t is not None]


def test_short_names_sit_two_to_a_row_and_long_ones_one_to_a_row():
    short = calls_chart([Series(name, [1, 1, 1], "#000") for name in ("search", "ask", "remember")])
    long = calls_chart([Series(name, [1, 1, 1], "#000") for name in ("search", "retrieve_company_memory")])
    (x1, y1), (x2, y2), (x3, y3) = legend_places(short)
    assert (y1 == y2, x1 == x3, y3 > y1) == (True, True, True)
    (x1, y1), (x2, y2) = legend_places(long)
    assert (x1 == x2, y2 > y1) == (True, True)


def test_a_single_measure_bar_chart_has_no_legend_and_says_its_unit():
    root = parsed(
        bar_chart(chart_id="e", title="Errors per day", labels=DAYS, values=[0, 2, 0], unit="errors", colour="#a00")
    )
    assert not [g for g in root.iter(f"{{{NS['svg']}}}g") if g.get("class") == "legend-item"]
    assert [t for t in titles(root, "rect") if t] == ["2 Mar: 2 errors"]


def test_an_empty_chart_says_there_is_nothing():
    svg = bar_chart(chart_id="e", title="Errors per day", labels=DAYS, values=[0, 0, 0], unit="errors", colour="#a00")
    assert "No errors in these days." in svg
    assert 'class="bar"' not in svg


def test_a_line_breaks_over_a_day_without_calls_and_each_point_has_its_value():
    labels = ["1 Mar", "2 Mar", "3 Mar", "4 Mar"]
    p50 = Series("p50", [10.0, None, 30.0, 40.0], "#000")
    p95 = Series("p95", [90.0, None, None, 120.5], "#111", dashed=True)
    svg = line_chart(chart_id="l", title="Latency", labels=labels, unit="ms", series=[p50, p95])
    root = parsed(svg)
    lines = [p for p in root.iter(f"{{{NS['svg']}}}polyline")]
    assert [len(p.get("points", "").split()) for p in lines] == [1, 2, 1, 1]
    assert titles(root, "circle") == ["1 Mar: p50 10 ms", "3 Mar: p50 30 ms", "4 Mar: p50 40 ms",
                                      "1 Mar: p95 90 ms", "4 Mar: p95 120 ms"]  # fmt: skip
    assert 'stroke-dasharray="5 3"' in svg


def test_top_and_other_keeps_the_busiest_tools_and_adds_up_the_rest():
    days = [{"a": 5, "b": 1, "c": 1}, {"a": 1, "b": 3, "d": 2}]
    series = top_and_other(days, keep=2)
    assert [(s.name, list(s.values)) for s in series] == [("a", [5, 1]), ("b", [1, 3]), (OTHER, [1, 2])]
    assert len({s.colour for s in series}) == 3


def test_top_and_other_adds_no_other_when_every_tool_fits():
    assert [s.name for s in top_and_other([{"a": 1}, {"b": 2}], keep=5)] == ["b", "a"]


def test_a_count_axis_steps_by_whole_numbers():
    assert nice_scale(1, whole=True) == (4, 1)
    assert nice_scale(9, whole=True) == (20, 5)
    assert nice_scale(90, whole=True) == (100, 25)
    root = parsed(bar_chart(chart_id="e", title="Errors", labels=DAYS, values=[1, 0, 0], unit="errors", colour="#a00"))
    axis = [t.text for t in root.iter(f"{{{NS['svg']}}}text") if t.get("text-anchor") == "end"]
    assert axis == ["0", "1", "2", "3", "4"]


def test_the_axis_rounds_up_to_a_round_step():
    assert nice_scale(0) == (4, 1)
    assert nice_scale(3) == (4, 1)
    assert nice_scale(7) == (8, 2)
    assert nice_scale(9) == (10, 2.5)
    assert nice_scale(130) == (200, 50)
    assert nice_scale(0.3) == (0.4, 0.1)
