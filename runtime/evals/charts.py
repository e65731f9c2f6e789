"""Small SVG charts for reports: plain data in, a ``Chart`` (SVG text and its data table) out:
lines over runs, bars (grouped by series or not), histograms, scatter plots.

Pure Python and deterministic: series are drawn in name order, every coordinate is written with
one decimal and every tick label with a fixed number of decimals, so the same data gives the
same bytes under any ``PYTHONHASHSEED``. Every text that reaches the output (titles, labels,
series names) is escaped and stripped of control characters; nothing refers outside the SVG (no
script, no link, no font, no image). Each chart carries ``role="img"``, a ``<title>`` and a
``<desc>`` named by ``aria-labelledby``, and a table of the same numbers for readers who cannot
see the picture (``Chart.figure`` puts both in one ``<figure>``).

NaN and infinities are refused (``ChartError``); bars and histograms refuse negative values; a
line chart's missing point (``None``) leaves a gap in its line.
"""

from __future__ import annotations

import html
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

WIDTH = 640
HEIGHT = 300
EMPTY_HEIGHT = 40
LEFT, RIGHT, TOP, BOTTOM = 56, 16, 24, 64
PLOT_W = WIDTH - LEFT - RIGHT
PLOT_H = HEIGHT - TOP - BOTTOM
LABEL_CHARS = 24  # longer labels are cut in the picture (the table keeps them whole)
MIN_CHARS = 8  # an x label is not cut shorter than this; labels are skipped instead
MAX_TICK_LABELS = 12
MAX_BAR_W = 72
NO_VALUE = "–"
CHAR_W = 6  # about the width of one character at font-size 11, to keep labels apart
# Okabe–Ito: told apart with every common colour-vision deficiency.
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#000000")
AXIS = "#444444"
GRID = "#dddddd"
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
_ID = re.compile(r"[^a-z0-9-]+")

MIN_STEP = 1e-6  # the finest tick or bin step (labels keep up to 6 decimals)
EPSILON = 1e-9  # float noise allowed when a value is put on a multiple of a step
MAX_VALUE = 1e12  # beyond, a value is refused (spans this wide have no readable axis anyway)

Point = tuple[float, float | None]


class ChartError(ValueError):
    """Data a chart cannot draw (NaN, an infinity, a negative bar): one line."""


@dataclass(frozen=True)
class Chart:
    """One chart: the SVG element and an HTML table of the same numbers."""

    chart_id: str
    title: str
    svg: str
    table: str

    def figure(self) -> str:
        """The chart and, folded under it, its data table, in one ``<figure>``."""
        return (
            f'<figure class="chart" id="{self.chart_id}">'
            f"<figcaption>{text(self.title)}</figcaption>{self.svg}"
            f"<details><summary>Data: {text(self.title)}</summary>{self.table}</details>"
            "</figure>"
        )


def text(value: object) -> str:
    """``value`` as escaped text for HTML or SVG: control characters dropped, quotes escaped."""
    return html.escape(_CONTROL.sub("", str(value)), quote=True)


def _short(value: str, chars: int = LABEL_CHARS) -> str:
    return value if len(value) <= chars else value[: chars - 1] + "…"


def chart_id(value: str) -> str:
    """A safe element id from ``value`` (lower-case letters, digits and dashes)."""
    cleaned = _ID.sub("-", value.lower()).strip("-")
    return f"chart-{cleaned or 'x'}"


def _element_id(given: str | None, title: str) -> str:
    """``given`` made safe as an id (it lands in attributes), else one from ``title``."""
    if given is None:
        return chart_id(title)
    return _ID.sub("-", given.lower()).strip("-") or chart_id(title)


def _finite(value: object, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ChartError(f"{what}: {value!r} is not a number")
    if not math.isfinite(value):
        raise ChartError(f"{what}: {value!r} is not a finite number")
    if abs(value) > MAX_VALUE:
        raise ChartError(f"{what}: {value!r} is too large to draw (more than {MAX_VALUE:g})")
    return float(value)


def _num(value: float) -> str:
    """A coordinate: one decimal, never ``-0.0``."""
    rounded = round(value, 1)
    return f"{0.0 if rounded == 0 else rounded:.1f}"


def _step(span: float, count: int) -> float:
    raw = span / max(1, count)
    power = 10.0 ** math.floor(math.log10(raw))
    for factor in (1.0, 2.0, 2.5, 5.0, 10.0):
        if raw <= factor * power:
            return factor * power
    return 10.0 * power


def value_label(value: float, decimals: int = 2) -> str:
    """A number as the charts and their tables print it: fixed decimals, no ``-0``."""
    shown = f"{value:.{decimals}f}"
    return shown[1:] if shown.startswith("-") and float(shown) == 0 else shown


@dataclass(frozen=True)
class _Axis:
    low: float
    high: float
    ticks: tuple[float, ...]
    decimals: int

    def y(self, value: float) -> float:
        return TOP + PLOT_H - (value - self.low) / (self.high - self.low) * PLOT_H

    def x(self, value: float) -> float:
        return LEFT + (value - self.low) / (self.high - self.low) * PLOT_W


def _axis(
    low: float, high: float, fixed: tuple[float, float] | None, *, whole: bool = False
) -> _Axis:
    """The y axis over ``low``..``high`` (widened to ``fixed``) with round ticks; ``whole``:
    counts, so the ticks are whole numbers."""
    if fixed is not None:
        low, high = min(low, fixed[0]), max(high, fixed[1])
    if high == low:
        low, high = (low - 1, high + 1) if low != 0 else (0.0, 1.0)
    step = max(MIN_STEP, _step(high - low, 5))
    if whole:
        step = max(1.0, math.ceil(step))
    first = _slot(low, step)
    last = -_slot(-high, step)  # the least multiple of step at or above high
    start, end = first * step, last * step
    ticks = tuple(round((first + i) * step, 9) for i in range(last - first + 1))
    return _Axis(start, end, ticks, _edge_decimals(ticks))


def _open(cid: str, title: str, desc: str) -> list[str]:
    return [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {HEIGHT}" '
        f'width="{WIDTH}" height="{HEIGHT}" role="img" '
        f'aria-labelledby="{cid}-title {cid}-desc" font-family="sans-serif" font-size="11">',
        f'<title id="{cid}-title">{text(title)}</title>',
        f'<desc id="{cid}-desc">{text(desc)}</desc>',
    ]


def _y_axis(axis: _Axis, label: str) -> list[str]:
    parts: list[str] = []
    for tick in axis.ticks:
        y = _num(axis.y(tick))
        parts.append(
            f'<line x1="{LEFT}" y1="{y}" x2="{LEFT + PLOT_W}" y2="{y}" stroke="{GRID}"/>'
            f'<text x="{LEFT - 6}" y="{y}" text-anchor="end" dominant-baseline="middle">'
            f"{value_label(tick, axis.decimals)}</text>"
        )
    bottom = TOP + PLOT_H
    parts.append(
        f'<line x1="{LEFT}" y1="{TOP}" x2="{LEFT}" y2="{bottom}" stroke="{AXIS}"/>'
        f'<line x1="{LEFT}" y1="{bottom}" x2="{LEFT + PLOT_W}" y2="{bottom}" stroke="{AXIS}"/>'
        f'<text x="12" y="{_num(TOP + PLOT_H / 2)}" text-anchor="middle" '
        f'transform="rotate(-90 12 {_num(TOP + PLOT_H / 2)})">{text(_short(label))}</text>'
    )
    return parts


def _x_labels(
    positions: Sequence[tuple[float, str]], label: str, *, inward: bool = False, cut: bool = False
) -> list[str]:
    """The labels under the x axis, every n-th one when they do not all fit; ``cut``: names
    (scenarios, steps) are first cut to the room each one has, when that keeps two thirds of
    them (dates and ranges are not: their ends matter)."""
    if inward:  # a line's labels sit on its points; the outer two grow inwards from the ends
        room = PLOT_W / max(1, len(positions) - 1) * 2 / 3
    else:
        room = PLOT_W / max(1, len(positions))
    chars = max(MIN_CHARS, min(LABEL_CHARS, int((room - 8) // CHAR_W)))
    whole = max((len(_short(name)) for _, name in positions), default=0)
    if not cut or chars * 3 < whole * 2:  # cut by more than a third: fewer labels, each readable
        chars = LABEL_CHARS
    widest = max((len(_short(name, chars)) for _, name in positions), default=0)
    every = max(
        1, math.ceil(len(positions) / MAX_TICK_LABELS), math.ceil((CHAR_W * widest + 8) / room)
    )
    base = TOP + PLOT_H
    parts = [
        f'<text x="{_num(x)}" y="{base + 14}" text-anchor="middle">'
        f"{text(_short(name, chars))}</text>"
        for index, (x, name) in enumerate(positions)
        if index % every == 0
    ]
    if inward and len(parts) > 1:  # a line's outer labels grow inwards, never cut at the edge
        parts[0] = parts[0].replace('text-anchor="middle"', 'text-anchor="start"', 1)
        parts[-1] = parts[-1].replace('text-anchor="middle"', 'text-anchor="end"', 1)
    parts.append(
        f'<text x="{_num(LEFT + PLOT_W / 2)}" y="{HEIGHT - 8}" text-anchor="middle">'
        f"{text(_short(label))}</text>"
    )
    return parts


def _empty(cid: str, title: str, note: str) -> list[str]:
    """A short chart that only says there is nothing to draw."""
    head = _open(cid, title, note)
    head[0] = head[0].replace(
        f'viewBox="0 0 {WIDTH} {HEIGHT}" width="{WIDTH}" height="{HEIGHT}"',
        f'viewBox="0 0 {WIDTH} {EMPTY_HEIGHT}" width="{WIDTH}" height="{EMPTY_HEIGHT}"',
    )
    return [
        *head,
        f'<text x="{WIDTH // 2}" y="{EMPTY_HEIGHT // 2}" text-anchor="middle">{text(note)}</text>',
        "</svg>",
    ]


def table_html(caption: str, header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """An HTML table; every cell is escaped here."""
    head = "".join(f'<th scope="col">{text(cell)}</th>' for cell in header)
    if not rows:
        body = f'<tr><td colspan="{max(1, len(header))}">no data</td></tr>'
    else:
        body = "".join(
            "<tr>" + "".join(f"<td>{text(cell)}</td>" for cell in row) + "</tr>" for row in rows
        )
    return (
        f"<table><caption>{text(caption)}</caption><thead><tr>{head}</tr></thead>"
        f"<tbody>{body}</tbody></table>"
    )


def line_chart(
    title: str,
    series: Mapping[str, Sequence[Point]],
    *,
    x_labels: Mapping[float, str] | None = None,
    x_title: str = "",
    y_title: str = "",
    y_range: tuple[float, float] | None = None,
    decimals: int = 2,
    element_id: str | None = None,
) -> Chart:
    """Several series of ``(x, y)`` points, each a line (a ``None`` y leaves a gap) with a dot
    per point. ``x_labels`` names x positions (run dates…); ``y_range`` is the least range the
    y axis covers (``(0, 1)`` for rates)."""
    cid = _element_id(element_id, title)
    names = sorted(series)
    points: dict[str, list[Point]] = {}
    for name in names:
        points[name] = sorted(
            (
                (
                    _finite(x, f"{title}: {name}: x"),
                    None if y is None else _finite(y, f"{title}: {name}: y"),
                )
                for x, y in series[name]
            ),
            key=lambda point: point[0],
        )
    xs = sorted({x for pts in points.values() for x, _ in pts})
    ys = [y for pts in points.values() for _, y in pts if y is not None]
    labels = dict(x_labels or {})
    cells: dict[str, dict[float, str]] = {name: {} for name in names}
    for name in names:
        for x, y in points[name]:  # the first point at an x is the one drawn in the table
            cells[name].setdefault(x, NO_VALUE if y is None else value_label(y, decimals))
    table = table_html(
        title,
        [x_title or "x", *names],
        [
            [
                labels.get(x, value_label(x, 0 if x == int(x) else 2)),
                *(cells[name].get(x, "") for name in names),
            ]
            for x in xs
        ],
    )
    if not ys:
        return Chart(cid, title, "".join(_empty(cid, title, f"{title}: no data yet")), table)
    axis = _axis(min(ys), max(ys), y_range, whole=decimals == 0)
    x_low, x_high = xs[0], xs[-1]

    def px(x: float) -> float:
        if x_high == x_low:
            return LEFT + PLOT_W / 2
        return LEFT + (x - x_low) / (x_high - x_low) * PLOT_W

    desc = f"Line chart, {len(names)} series over {len(xs)} points: " + "; ".join(
        f"{name} from {_ends(points[name], decimals)}" for name in names
    )
    parts = [*_open(cid, title, desc), *_y_axis(axis, y_title)]
    parts += _x_labels(
        [(px(x), labels.get(x, value_label(x, 0))) for x in xs], x_title, inward=True
    )
    for index, name in enumerate(names):
        colour = PALETTE[index % len(PALETTE)]
        parts.append(f'<g class="series" data-series="{index}">')
        for run in _runs(points[name]):
            coords = " ".join(f"{_num(px(x))},{_num(axis.y(y))}" for x, y in run)
            if len(run) > 1:
                parts.append(
                    f'<polyline points="{coords}" fill="none" stroke="{colour}" stroke-width="2"/>'
                )
            for x, y in run:
                parts.append(
                    f'<circle cx="{_num(px(x))}" cy="{_num(axis.y(y))}" r="3" fill="{colour}"/>'
                )
        parts.append("</g>")
    parts += _legend(names)
    parts.append("</svg>")
    return Chart(cid, title, "".join(parts), table)


def _ends(points: Sequence[Point], decimals: int) -> str:
    values = [y for _, y in points if y is not None]
    if not values:
        return "no values"
    return f"{value_label(values[0], decimals)} to {value_label(values[-1], decimals)}"


def _runs(points: Sequence[Point]) -> list[list[tuple[float, float]]]:
    runs: list[list[tuple[float, float]]] = [[]]
    for x, y in points:
        if y is None:
            if runs[-1]:
                runs.append([])
            continue
        runs[-1].append((x, y))
    return [run for run in runs if run]


def _legend(names: Sequence[str]) -> list[str]:
    parts: list[str] = []
    x = LEFT
    y = HEIGHT - 26
    for index, name in enumerate(names):
        shown = _short(name)
        colour = PALETTE[index % len(PALETTE)]
        parts.append(
            f'<rect x="{x}" y="{y - 8}" width="10" height="10" fill="{colour}"/>'
            f'<text x="{x + 14}" y="{y}">{text(shown)}</text>'
        )
        x += 24 + 7 * len(shown)
    return parts


def bar_chart(
    title: str,
    bars: Sequence[tuple[str, float]],
    *,
    x_title: str = "",
    y_title: str = "",
    y_range: tuple[float, float] | None = None,
    decimals: int = 2,
    element_id: str | None = None,
    cut_labels: bool = False,
) -> Chart:
    """One bar per ``(label, value)``, in the order given; values must be ≥ 0. ``cut_labels``:
    the labels are names, cut short rather than skipped when they do not fit."""
    cid = _element_id(element_id, title)
    groups = [(str(label), {"": _bar(title, str(label), value)}) for label, value in bars]
    table = table_html(
        title,
        [x_title or "label", y_title or "value"],
        [[label, value_label(values[""] or 0.0, decimals)] for label, values in groups],
    )
    if not groups:
        return Chart(cid, title, "".join(_empty(cid, title, f"{title}: no data yet")), table)
    svg = _bars_svg(
        cid, title, groups, [""], x_title, y_title, y_range, decimals, cut_labels=cut_labels
    )
    return Chart(cid, title, svg, table)


def grouped_bar_chart(
    title: str,
    groups: Sequence[tuple[str, Mapping[str, float | None]]],
    *,
    x_title: str = "",
    y_title: str = "",
    y_range: tuple[float, float] | None = None,
    decimals: int = 2,
    element_id: str | None = None,
) -> Chart:
    """Per group (a scenario…) in the order given, one bar per series (memory on, off…) in
    name order, coloured by series with a legend; a missing or ``None`` value draws no bar (its
    table cell shows ``–``). Values must be ≥ 0; group labels are cut short to fit."""
    cid = _element_id(element_id, title)
    names = sorted({str(name) for _, values in groups for name in values})
    checked: list[tuple[str, dict[str, float | None]]] = []
    for label, values in groups:
        found = {str(name): value for name, value in values.items()}
        checked.append(
            (
                str(label),
                {
                    name: None
                    if found.get(name) is None
                    else _bar(title, f"{label}: {name}", found[name])
                    for name in names
                },
            )
        )
    table = table_html(
        title,
        [x_title or "group", *names],
        [
            [label, *(NO_VALUE if v is None else value_label(v, decimals) for v in values.values())]
            for label, values in checked
        ],
    )
    if not any(v is not None for _, values in checked for v in values.values()):
        return Chart(cid, title, "".join(_empty(cid, title, f"{title}: no data yet")), table)
    svg = _bars_svg(
        cid, title, checked, names, x_title, y_title, y_range, decimals, cut_labels=True
    )
    return Chart(cid, title, svg, table)


def _bar(title: str, label: str, value: object) -> float:
    checked = _finite(value, f"{title}: {label}")
    if checked < 0:
        raise ChartError(f"{title}: {label}: a bar cannot be negative ({checked!r})")
    return checked


def _bars_svg(
    cid: str,
    title: str,
    groups: Sequence[tuple[str, Mapping[str, float | None]]],
    names: Sequence[str],
    x_title: str,
    y_title: str,
    y_range: tuple[float, float] | None,
    decimals: int,
    *,
    gap: float = 0.2,
    cut_labels: bool = False,
) -> str:
    drawn = [
        (index, label, series, name, value)
        for index, (label, values) in enumerate(groups)
        for series, name in enumerate(names)
        if (value := values.get(name)) is not None
    ]
    axis = _axis(0.0, max(value for *_, value in drawn), y_range, whole=decimals == 0)
    slot = PLOT_W / len(groups)
    width = min(slot * (1 - gap), MAX_BAR_W * len(names)) / len(names)
    offset = (slot - width * len(names)) / 2
    described = [
        f"{label}{f' {name}' if name else ''} {value_label(value, decimals)}"
        for _, label, _, name, value in drawn
    ]
    more = f" and {len(described) - 20} more" if len(described) > 20 else ""
    desc = f"Bar chart, {len(drawn)} bars: {', '.join(described[:20])}{more}"
    parts = [*_open(cid, title, desc), *_y_axis(axis, y_title)]
    base = axis.y(0.0)
    labelled = len(drawn) <= 2 * MAX_TICK_LABELS and width >= 22
    for index, label, series, name, value in drawn:
        x = LEFT + index * slot + offset + series * width
        top = axis.y(value)
        shown = value_label(value, decimals)
        parts.append(
            f'<rect x="{_num(x)}" y="{_num(top)}" width="{_num(width)}" '
            f'height="{_num(base - top)}" fill="{PALETTE[series % len(PALETTE)]}">'
            f"<title>{text(label)}{': ' + text(name) if name else ''}: {shown}</title></rect>"
        )
        if labelled:
            parts.append(
                f'<text x="{_num(x + width / 2)}" y="{_num(top - 4)}" text-anchor="middle">'
                f"{shown}</text>"
            )
    parts += _x_labels(
        [(LEFT + index * slot + slot / 2, label) for index, (label, _) in enumerate(groups)],
        x_title,
        cut=cut_labels,
    )
    if len(names) > 1:
        parts += _legend(names)
    parts.append("</svg>")
    return "".join(parts)


def scatter_chart(
    title: str,
    series: Mapping[str, Sequence[tuple[float, float]]],
    *,
    x_title: str = "",
    y_title: str = "",
    x_range: tuple[float, float] | None = None,
    y_range: tuple[float, float] | None = None,
    decimals: int = 2,
    element_id: str | None = None,
) -> Chart:
    """Several series of ``(x, y)`` points, a dot each, on two numeric axes (the least ranges
    they cover: ``x_range``, ``y_range``); series in name order with a legend."""
    cid = _element_id(element_id, title)
    names = sorted(series)
    points = {
        name: sorted(
            (_finite(x, f"{title}: {name}: x"), _finite(y, f"{title}: {name}: y"))
            for x, y in series[name]
        )
        for name in names
    }
    header = [x_title or "x", y_title or "y"]
    if len(names) > 1:
        header.insert(0, "series")
    table = table_html(
        title,
        header,
        [
            [
                *([name] if len(names) > 1 else []),
                value_label(x, decimals),
                value_label(y, decimals),
            ]
            for name in names
            for x, y in points[name]
        ],
    )
    every = [point for name in names for point in points[name]]
    if not every:
        return Chart(cid, title, "".join(_empty(cid, title, f"{title}: no data yet")), table)
    xs, ys = [x for x, _ in every], [y for _, y in every]
    x_axis = _axis(min(xs), max(xs), x_range)
    y_axis = _axis(min(ys), max(ys), y_range)
    desc = f"Scatter chart, {len(every)} points: " + "; ".join(
        f"{name}: {len(points[name])} points" for name in names
    )
    parts = [*_open(cid, title, desc), *_y_axis(y_axis, y_title)]
    parts += _x_labels(
        [(x_axis.x(tick), value_label(tick, x_axis.decimals)) for tick in x_axis.ticks],
        x_title,
    )
    for index, name in enumerate(names):
        colour = PALETTE[index % len(PALETTE)]
        parts.append(f'<g class="series" data-series="{index}">')
        parts += [
            f'<circle cx="{_num(x_axis.x(x))}" cy="{_num(y_axis.y(y))}" r="3" fill="{colour}" '
            'fill-opacity="0.7"/>'
            for x, y in points[name]
        ]
        parts.append("</g>")
    if len(names) > 1:
        parts += _legend(names)
    parts.append("</svg>")
    return Chart(cid, title, "".join(parts), table)


def histogram(
    title: str,
    values: Sequence[float],
    *,
    bins: int = 10,
    unit: str = "",
    x_title: str = "",
    element_id: str | None = None,
) -> Chart:
    """How ``values`` (≥ 0) spread over about ``bins`` equal bins with round edges (at most
    ``bins + 1``: the first edge is rounded down)."""
    cid = _element_id(element_id, title)
    checked = sorted(_finite(value, title) for value in values)
    if checked and checked[0] < 0:
        raise ChartError(f"{title}: a histogram value cannot be negative ({checked[0]!r})")
    edges = _edges(checked, max(1, bins))
    counts = [0] * (len(edges) - 1)
    for value in checked:
        index = min(len(counts) - 1, _bin_of(edges, value))
        counts[index] += 1
    decimals = _edge_decimals(edges)
    suffix = f" {unit}" if unit else ""
    labels = [
        f"{value_label(edges[i], decimals)}–{value_label(edges[i + 1], decimals)}"
        for i in range(len(counts))
    ]
    table = table_html(
        title,
        [x_title or "range", "count"],
        [[name + suffix, str(c)] for name, c in zip(labels, counts, strict=True)]
        if checked
        else [],
    )
    if not checked:
        return Chart(cid, title, "".join(_empty(cid, title, f"{title}: no data yet")), table)
    bars = [(label, {"": float(count)}) for label, count in zip(labels, counts, strict=True)]
    svg = _bars_svg(cid, title, bars, [""], x_title, "count", None, 0, gap=0.04)
    return Chart(cid, title, svg, table)


def _slot(value: float, width: float) -> int:
    """Which multiple of ``width`` ``value`` lies on or above (0.3 / 0.1 is 3, not 2.999…)."""
    return math.floor(value / width + EPSILON)


def _edges(values: Sequence[float], bins: int) -> list[float]:
    if not values:
        return [0.0, 1.0]
    low, high = values[0], values[-1]
    span = high - low
    width = max(MIN_STEP, _step(span, bins) if span > 0 else _step(abs(low) or 1.0, 1))
    first, last = _slot(low, width), _slot(high, width)
    return [(first + index) * width for index in range(last - first + 2)]


def _bin_of(edges: Sequence[float], value: float) -> int:
    width = edges[1] - edges[0]
    return max(0, _slot(value, width) - _slot(edges[0], width))


def _edge_decimals(edges: Sequence[float]) -> int:
    for decimals in range(7):
        if all(abs(edge - round(edge, decimals)) < 1e-9 for edge in edges):
            return decimals
    return 6
