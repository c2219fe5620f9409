"""Charts drawn on the server as SVG: no script, nothing fetched by the browser.

Each builder is a pure function from figures to SVG text. Every chart has a title and a
description that assistive technology reads (``role="img"`` labelled by them), and each bar or
point carries its value in a ``<title>``, which browsers show on hover. The drawing is sized by
its ``viewBox`` only, so it takes the width of the page; the coordinates are chosen so that its
text stays readable on a 375 px wide phone. All text is escaped: tool and user names come from
outside.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

WIDTH = 360
LEFT, RIGHT, TOP = 38, 14, 16
PLOT_HEIGHT = 130
AXIS_LABELS = 18  # the day labels under the plot
LEGEND_ROW, LEGEND_COLUMN = 16, (WIDTH - LEFT) // 2
LEGEND_NAME_MAX = 44  # one name to a row: what fits the width
LEGEND_SIDE_BY_SIDE = 14  # names up to this long fit two to a row
FONT = 11
GRID_LINES = 4
# Told apart by people with the common colour blindnesses (Okabe and Ito); grey is "other".
PALETTE = ("#0072b2", "#e69f00", "#009e73", "#cc79a7", "#56b4e9", "#d55e00", "#f0e442")
OTHER_COLOUR = "#8c959f"
OTHER = "other"
SINGULAR = {"calls": "call", "credits": "credit", "errors": "error"}


@dataclass(frozen=True)
class Series:
    name: str
    values: Sequence[float | None]
    colour: str
    dashed: bool = False


def top_and_other(per_day: Sequence[dict[str, int]], *, keep: int = 5) -> list[Series]:
    """One series per busiest tool (most calls first) and one ``other`` for the rest, if any."""
    totals: dict[str, int] = {}
    for day in per_day:
        for tool, calls in day.items():
            totals[tool] = totals.get(tool, 0) + calls
    ranked = sorted(totals, key=lambda tool: (-totals[tool], tool))
    kept, rest = ranked[:keep], set(ranked[keep:])
    series = [
        Series(tool, [float(day.get(tool, 0)) for day in per_day], PALETTE[i % len(PALETTE)])
        for i, tool in enumerate(kept)
    ]
    if rest:
        others = [float(sum(n for tool, n in day.items() if tool in rest)) for day in per_day]
        series.append(Series(OTHER, others, OTHER_COLOUR))
    return series


def stacked_bar_chart(
    *, chart_id: str, title: str, labels: Sequence[str], series: Sequence[Series], unit: str, legend: bool = True
) -> str:
    """Bars per label, each split by series (bottom first), with a legend of the series."""
    n = len(labels)
    totals = [sum(s.values[i] or 0 for s in series) for i in range(n)]
    top, step = nice_scale(max(totals, default=0), whole=True)
    parts = _frame(labels, top, step, unit)
    slot = _slot(n)
    for i, label in enumerate(labels):
        base = 0.0
        for s in series:
            value = s.values[i] or 0
            if value <= 0:
                continue
            y0, y1 = _y(base, top), _y(base + value, top)
            parts.append(
                f'<rect class="bar" x="{_x(i, n) + slot * 0.1:.1f}" y="{y1:.1f}" width="{slot * 0.8:.1f}" '
                f'height="{max(y0 - y1, 0.5):.1f}" fill="{escape(s.colour)}">'
                f"<title>{escape(_hover(label, s.name if legend else '', value, unit))}</title></rect>"
            )
            base += value
    if not any(totals):
        parts.append(_empty_note(f"No {unit} in these days."))
    return _svg(chart_id, title, _summary(labels, totals, unit), parts, series if legend else [])


def bar_chart(
    *, chart_id: str, title: str, labels: Sequence[str], values: Sequence[float], unit: str, colour: str
) -> str:
    return stacked_bar_chart(
        chart_id=chart_id,
        title=title,
        labels=labels,
        series=[Series(title, list(values), colour)],
        unit=unit,
        legend=False,
    )


def line_chart(*, chart_id: str, title: str, labels: Sequence[str], series: Sequence[Series], unit: str) -> str:
    """A line per series, broken where a value is missing, with a point per value."""
    n = len(labels)
    values = [v for s in series for v in s.values if v is not None]
    top, step = nice_scale(max(values, default=0))
    parts = _frame(labels, top, step, unit)
    for s in series:
        dash = ' stroke-dasharray="5 3"' if s.dashed else ""
        for run in _runs(s.values):
            points = " ".join(f"{_centre(i, n):.1f},{_y(v, top):.1f}" for i, v in run)
            parts.append(
                f'<polyline class="line" points="{points}" fill="none" stroke="{escape(s.colour)}" '
                f'stroke-width="2"{dash}/>'
            )
        for i, v in enumerate(s.values):
            if v is not None:
                parts.append(
                    f'<circle class="point" cx="{_centre(i, n):.1f}" cy="{_y(v, top):.1f}" r="3" '
                    f'fill="{escape(s.colour)}"><title>{escape(_hover(labels[i], s.name, v, unit))}</title></circle>'
                )
    if not values:
        parts.append(_empty_note("No calls in these days."))
    highest = [
        f"highest {s.name} {_number(max(v for v in s.values if v is not None))} {unit}"
        for s in series
        if any(v is not None for v in s.values)
    ]
    summary = f"{n} days; " + ("; ".join(highest) if highest else "no values") + "."
    return _svg(chart_id, title, summary, parts, series)


def nice_scale(maximum: float, *, whole: bool = False) -> tuple[float, float]:
    """The top of the axis and the gap between its grid lines: a round step (1, 2, 2.5 or 5 times
    a power of ten) such that ``GRID_LINES`` steps reach ``maximum``; a whole number when
    ``whole`` (counts have no half calls)."""
    if maximum <= 0:
        return float(GRID_LINES), 1.0
    raw = maximum / GRID_LINES
    power = 10 ** math.floor(math.log10(raw))
    steps = [m * power for m in (1, 2, 2.5, 5, 10)]
    if whole:
        steps = [step for step in steps if step >= 1 and step == int(step)] or [1.0]
    step = next(step for step in steps if step >= raw)
    return step * GRID_LINES, step


# --- drawing ------------------------------------------------------------------------------------


def _svg(chart_id: str, title: str, summary: str, parts: list[str], legend: Sequence[Series]) -> str:
    legend_rows = math.ceil(len(legend) / _legend_columns(legend))
    height = TOP + PLOT_HEIGHT + AXIS_LABELS + (legend_rows * LEGEND_ROW + 6 if legend else 0)
    ident = escape(chart_id)
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" id="{ident}" viewBox="0 0 {WIDTH} {height}" role="img" '
        f'aria-labelledby="{ident}-title" aria-describedby="{ident}-desc" font-size="{FONT}" '
        f'font-family="system-ui, sans-serif">'
        f'<title id="{ident}-title">{escape(title)}</title><desc id="{ident}-desc">{escape(summary)}</desc>'
        + "".join(parts)
        + "".join(_legend(legend))
        + "</svg>"
    )


def _frame(labels: Sequence[str], top: float, step: float, unit: str) -> list[str]:
    """The unit, grid lines with their values, and a day label every week back from the last."""
    parts = [f'<text x="2" y="{TOP - 6}" fill="#4a5361">{escape(unit)}</text>']
    for k in range(GRID_LINES + 1):
        y = _y(k * step, top)
        parts.append(f'<line x1="{LEFT}" y1="{y:.1f}" x2="{WIDTH - RIGHT}" y2="{y:.1f}" stroke="#d0d7de"/>')
        parts.append(
            f'<text x="{LEFT - 4}" y="{y + 4:.1f}" text-anchor="end" fill="#4a5361">{_number(k * step)}</text>'
        )
    n = len(labels)
    for i, label in enumerate(labels):
        if (n - 1 - i) % 7 == 0:
            parts.append(
                f'<text class="day" x="{_centre(i, n):.1f}" y="{TOP + PLOT_HEIGHT + 14}" text-anchor="middle" '
                f'fill="#4a5361">{escape(label)}</text>'
            )
    return parts


def _legend_columns(series: Sequence[Series]) -> int:
    """Two names to a row when every one is short, else one: long tool names must not overlap."""
    return 2 if all(len(s.name) <= LEGEND_SIDE_BY_SIDE for s in series) else 1


def _legend(series: Sequence[Series]) -> list[str]:
    parts = []
    base = TOP + PLOT_HEIGHT + AXIS_LABELS + 4
    columns = _legend_columns(series)
    for k, s in enumerate(series):
        x, y = LEFT + (k % columns) * LEGEND_COLUMN, base + (k // columns) * LEGEND_ROW
        name = s.name if len(s.name) <= LEGEND_NAME_MAX else s.name[: LEGEND_NAME_MAX - 1] + "…"
        dash = ' stroke-dasharray="5 3"' if s.dashed else ""
        colour = escape(s.colour)
        swatch = (
            f'<line x1="{x}" y1="{y + 5}" x2="{x + 14}" y2="{y + 5}" stroke="{colour}" stroke-width="3"{dash}/>'
            if s.dashed
            else f'<rect x="{x}" y="{y}" width="10" height="10" fill="{colour}"/>'
        )
        parts.append(
            f'<g class="legend-item"><title>{escape(s.name)}</title>{swatch}'
            f'<text x="{x + 18}" y="{y + 9}" fill="#1b1f24">{escape(name)}</text></g>'
        )
    return parts


def _empty_note(text: str) -> str:
    return (
        f'<text x="{LEFT + (WIDTH - LEFT - RIGHT) / 2:.1f}" y="{TOP + PLOT_HEIGHT / 2:.1f}" text-anchor="middle" '
        f'fill="#4a5361">{escape(text)}</text>'
    )


def _slot(n: int) -> float:
    return (WIDTH - LEFT - RIGHT) / max(n, 1)


def _x(i: int, n: int) -> float:
    return LEFT + i * _slot(n)


def _centre(i: int, n: int) -> float:
    return _x(i, n) + _slot(n) / 2


def _y(value: float, top: float) -> float:
    return TOP + PLOT_HEIGHT * (1 - min(value, top) / top)


def _runs(values: Sequence[float | None]) -> list[list[tuple[int, float]]]:
    """The stretches of consecutive values that are present."""
    runs: list[list[tuple[int, float]]] = [[]]
    for i, v in enumerate(values):
        if v is None:
            if runs[-1]:
                runs.append([])
        else:
            runs[-1].append((i, v))
    return [run for run in runs if run]


def _number(value: float) -> str:
    if value >= 10_000:
        return f"{value / 1000:.0f}k"
    if value >= 1000:
        return f"{value / 1000:.1f}k".replace(".0k", "k")
    if value == int(value) or value >= 10:
        return f"{value:.0f}"
    return f"{value:.1f}"


def _hover(label: str, name: str, value: float, unit: str) -> str:
    exact = f"{value:,.0f}" if value == int(value) or value >= 10 else f"{value:.1f}"
    return f"{label}: {name + ' ' if name else ''}{exact} {SINGULAR.get(unit, unit) if value == 1 else unit}"


def _summary(labels: Sequence[str], totals: Sequence[float], unit: str) -> str:
    total = sum(totals)
    if not total:
        return f"{len(labels)} days; no {unit}."
    busiest = max(range(len(totals)), key=lambda i: totals[i])
    return f"{len(labels)} days; {total:,.0f} {unit} in all; the most on {labels[busiest]} ({totals[busiest]:,.0f})."
