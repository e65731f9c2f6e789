"""The SVG charts: escaped, deterministic, accessible, and honest about bad data."""

from __future__ import annotations

import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

from specwire.runtime.evals.charts import (
    Chart,
    ChartError,
    bar_chart,
    chart_id,
    grouped_bar_chart,
    histogram,
    line_chart,
    scatter_chart,
    table_html,
)
from tests.runtime.evals.html_inert import (
    MARKUP_ATTACKS,
    Element,
    assert_inert,
    hostile_texts,
    parse,
    shown_as,
)

ROOT = Path(__file__).resolve().parents[3]


def svg_of(chart: Chart) -> Element:
    [svg] = parse(chart.svg).root.find_all("svg")
    return svg


def y_ticks(svg: Element) -> list[str]:
    """The y axis's tick labels (right-aligned just left of the plot)."""
    return [t.all_text() for t in svg.find_all("text") if t.attrs.get("x") == "50"]


def cells(table: str) -> list[list[str]]:
    return [
        [cell.all_text() for cell in row.children]
        for row in parse(table).root.find_all("tbody")[0].find_all("tr")
    ]


def test_a_chart_is_an_image_named_by_its_title_and_description() -> None:
    chart = bar_chart("Re-ask rate", [("plan-pickup (on)", 0.0), ("plan-pickup (off)", 0.5)])
    svg = svg_of(chart)
    assert svg.attrs["role"] == "img"
    title_id, desc_id = svg.attrs["aria-labelledby"].split()
    [title] = svg.find_all("title")[:1]
    [desc] = svg.find_all("desc")
    assert (title.attrs["id"], title.all_text()) == (title_id, "Re-ask rate")
    assert desc.attrs["id"] == desc_id
    assert desc.all_text() == "Bar chart, 2 bars: plan-pickup (on) 0.00, plan-pickup (off) 0.50"
    assert cells(chart.table) == [["plan-pickup (on)", "0.00"], ["plan-pickup (off)", "0.50"]]
    # The figure holds the picture, its caption and the same numbers as a table.
    figure = parse(chart.figure()).root.find_all("figure")[0]
    assert figure.attrs["id"] == chart.chart_id == "chart-re-ask-rate"
    assert [child.tag for child in figure.children] == ["figcaption", "svg", "details"]
    assert figure.find_all("table")


def test_bar_heights_follow_the_values_on_a_zero_based_axis() -> None:
    svg = svg_of(bar_chart("Counts", [("a", 1.0), ("b", 4.0), ("c", 0.0)], decimals=0))
    heights = [float(rect.attrs["height"]) for rect in svg.find_all("rect")]
    assert heights[0] * 4 == pytest.approx(heights[1], abs=0.2) and heights[2] == 0
    assert y_ticks(svg) == ["0", "1", "2", "3", "4"]  # counts: whole ticks


def test_grouped_bars_are_coloured_by_series_with_a_legend() -> None:
    chart = grouped_bar_chart(
        "Re-ask rate",
        [("plan-pickup", {"memory on": 0.0, "memory off": 0.5}), ("ops", {"memory off": 1.0})],
        y_range=(0.0, 1.0),
    )
    svg = svg_of(chart)
    bars = [rect for rect in svg.find_all("rect") if rect.find_all("title")]
    assert [(b.find_all("title")[0].all_text(), b.attrs["fill"]) for b in bars] == [
        ("plan-pickup: memory off: 0.50", "#0072B2"),
        ("plan-pickup: memory on: 0.00", "#E69F00"),
        ("ops: memory off: 1.00", "#0072B2"),
    ]
    legend = [t.all_text() for t in svg.find_all("text") if t.attrs.get("y") == "274"]
    assert legend == ["memory off", "memory on"]
    assert cells(chart.table) == [["plan-pickup", "0.50", "0.00"], ["ops", "1.00", "–"]]
    assert "no data yet" in grouped_bar_chart("Empty", [("a", {"x": None})]).svg


def test_markup_attacks_are_escaped_in_titles_labels_series_and_tables() -> None:
    escaped_everywhere(list(MARKUP_ATTACKS))


def test_the_whole_injection_corpus_is_escaped() -> None:  # slow layer: ~460 texts, ~1 s
    escaped_everywhere(hostile_texts())


def escaped_everywhere(texts: list[str]) -> None:
    # All of them at once, in every place a chart shows text: one document to read back.
    charts = [
        line_chart(
            texts[0],
            {text: [(1, 0.5), (2, 0.25)] for text in texts},
            x_labels={1: texts[-1], 2: texts[1]},
            x_title=texts[2],
            y_title=texts[3],
        ),
        bar_chart(texts[4], [(text, 1.0) for text in texts], x_title=texts[5]),
        histogram(texts[6], [1.0, 2.0], unit=texts[7], x_title=texts[8]),
        scatter_chart(texts[9], {text: [(1.0, 2.0)] for text in texts[:20]}, y_title=texts[10]),
    ]
    tree = assert_inert("".join(chart.figure() for chart in charts))
    shown = tree.root.all_text()
    missing = [text for text in texts if shown_as(text) not in shown]
    assert not missing
    for text in texts:
        assert set(chart_id(text)) <= set("abcdefghijklmnopqrstuvwxyz0123456789-")


def test_escaping_covers_quotes_so_no_attribute_is_broken_out_of() -> None:
    chart = bar_chart('x" onload="alert(1)', [('y" onclick="alert(2)', 1.0)])
    tree = assert_inert(chart.figure())
    assert all(not name.startswith("on") for _, name, _ in tree.attributes)
    assert 'x" onload="alert(1)' in tree.root.all_text()


def test_the_table_fallback_escapes_every_cell() -> None:
    table = table_html(MARKUP_ATTACKS[0], MARKUP_ATTACKS[:2], [MARKUP_ATTACKS[2:4]])
    tree = assert_inert(table)
    assert cells(table) == [list(MARKUP_ATTACKS[2:4])]
    assert tree.root.find_all("caption")[0].all_text() == MARKUP_ATTACKS[0]


def test_nothing_refers_outside_the_svg() -> None:
    chart = line_chart("Runs", {"a": [(1, 0.1), (2, 0.9)], "b": [(1, 0.3)]})
    assert chart.svg.count("http") == 1  # the SVG namespace, which is a name, never fetched
    assert "href" not in chart.svg and "url(" not in chart.svg and "@import" not in chart.svg


def test_series_are_drawn_in_name_order_whatever_the_mapping_order() -> None:
    one = line_chart("S", {"b": [(2, 0.2), (1, 0.1)], "a": [(1, 0.5)]})
    two = line_chart("S", {"a": [(1, 0.5)], "b": [(1, 0.1), (2, 0.2)]})
    assert one == two
    groups = svg_of(one).find_all("g")
    assert [g.attrs["data-series"] for g in groups] == ["0", "1"]
    assert len(groups[1].find_all("polyline")) == 1  # b's two points are one line


CHART_SCRIPT = """
from specwire.runtime.evals.charts import (
    bar_chart, grouped_bar_chart, histogram, line_chart, scatter_chart
)
series = {name: [(x, (x * len(name)) % 7 / 7) for x in range(1, 6)] for name in
          {"re-ask", "retention", "proof honesty", "pick-up", "zeta", "alpha"}}
print(line_chart("Runs", series, x_labels={1.0: "first"}).figure())
print(bar_chart("Bars", [(n, float(len(n))) for n in sorted(series)]).figure())
print(histogram("Latency", [0.3, 0.7, 1.0, 12.5, 3.25], unit="ms").figure())
print(grouped_bar_chart("G", [(n, {"on": 0.5, "off": 0.25}) for n in sorted(series)]).figure())
print(scatter_chart("S", {n: [(1.0, len(n))] for n in series}).figure())
from datetime import UTC, datetime
from specwire.runtime.evals.history import history_record
from specwire.runtime.evals.report_html import eval_section_html, report_page_html
from tests.runtime.evals.eval_data import mode_results
record = history_record(mode_results() + mode_results("other"), datetime(2026, 12, 1, tzinfo=UTC))
section = eval_section_html(record["results"], totals=record["totals"], history=[record],
                            recall_ms=record["recallMs"], fact_created=[datetime(2026, 1, 1)])
print(report_page_html("Report", [section]))
"""


def test_the_same_data_gives_the_same_bytes_under_any_hash_seed() -> None:
    outputs = set()
    for seed in ("0", "1", "4242"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        done = subprocess.run(
            [sys.executable, "-c", CHART_SCRIPT],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            check=True,
            timeout=60,
        )
        outputs.add(done.stdout)
    assert len(outputs) == 1
    assert_inert(outputs.pop())


def test_empty_data_draws_a_no_data_chart_and_table() -> None:
    empty = (
        line_chart("Runs", {}),
        bar_chart("Bars", []),
        histogram("Latency", []),
        scatter_chart("Dots", {"a": []}),
    )
    for chart in empty:
        svg = svg_of(chart)
        assert svg.attrs["role"] == "img"
        assert f"{chart.title}: no data yet" in svg.all_text()
        assert not svg.find_all("rect") and not svg.find_all("polyline")
        assert cells(chart.table) == [["no data"]]
    # Series with only missing points have nothing to draw either.
    assert "no data yet" in line_chart("Runs", {"a": [(1, None)]}).svg


def test_one_point_is_a_dot_in_the_middle_and_one_value_one_bin() -> None:
    svg = svg_of(line_chart("One", {"a": [(3, 0.5)]}))
    [dot] = svg.find_all("circle")
    assert not svg.find_all("polyline")
    assert float(dot.attrs["cx"]) == pytest.approx(56 + 568 / 2, abs=0.1)
    chart = histogram("Latency", [5.0], unit="ms")
    assert cells(chart.table) == [["5–10 ms", "1"]]


def test_a_missing_point_leaves_a_gap_in_the_line() -> None:
    chart = line_chart("Gap", {"a": [(1, 0.2), (2, 0.4), (3, None), (4, 0.6), (5, 0.8)]})
    assert len(svg_of(chart).find_all("polyline")) == 2
    assert cells(chart.table)[2] == ["3", "–"]


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf, 1e13, "0.5", True])
def test_values_that_are_not_finite_numbers_are_refused(bad: object) -> None:
    with pytest.raises(ChartError):
        line_chart("L", {"a": [(1, bad)]})  # type: ignore[list-item]
    with pytest.raises(ChartError):
        bar_chart("B", [("a", bad)])  # type: ignore[list-item]
    with pytest.raises(ChartError):
        histogram("H", [1.0, bad])  # type: ignore[list-item]
    with pytest.raises(ChartError):
        grouped_bar_chart("G", [("a", {"on": bad})])  # type: ignore[dict-item]
    with pytest.raises(ChartError):
        scatter_chart("S", {"a": [(1.0, bad)]})  # type: ignore[list-item]


def test_negative_bars_and_latencies_are_refused_and_negative_lines_drawn() -> None:
    with pytest.raises(ChartError, match="negative"):
        bar_chart("B", [("a", -1.0)])
    with pytest.raises(ChartError, match="negative"):
        histogram("H", [3.0, -0.5])
    svg = svg_of(line_chart("Delta", {"a": [(1, -5.0), (2, 3.0)]}))
    ticks = y_ticks(svg)
    assert ticks == ["-6", "-4", "-2", "0", "2", "4"]
    assert "-0" not in ticks


def test_histogram_bins_are_round_and_count_every_value_once() -> None:
    values = [0.3, 0.7, 1.0, 0.3, 0.95]
    chart = histogram("Latency", values, unit="ms")
    rows = cells(chart.table)
    assert rows[0] == ["0.3–0.4 ms", "2"]  # 0.3 is on its bin's edge, not below it
    assert sum(int(count) for _, count in rows) == len(values)
    assert rows[-1] == ["1.0–1.1 ms", "1"]
    # Values closer together than the finest step fall in one bin.
    assert cells(histogram("Tight", [0.1, 0.1 + 1e-13]).table) == [["0.100000–0.100001", "2"]]


def test_names_are_cut_to_fit_and_dates_thinned_whole() -> None:
    names = ["ops-notes-recall", "per-turn-recall", "plan-pickup", "requirement-survives"]
    names.append("returning-customer")
    grouped = svg_of(grouped_bar_chart("R", [(name, {"on": 0.5}) for name in names]))
    shown = [t.all_text() for t in grouped.find_all("text") if t.attrs.get("y") == "250"]
    assert shown == [*names[:3], "requirement-surv…", "returning-custom…"]
    days = [(f"2026-12-{day:02d}", float(day)) for day in range(1, 31)]
    bars = svg_of(bar_chart("Per day", days))
    shown = [t.all_text() for t in bars.find_all("text") if t.attrs.get("y") == "250"]
    assert shown and set(shown) <= {label for label, _ in days}  # whole labels, not all
    assert len(shown) < len(days)


def test_a_given_element_id_is_made_safe() -> None:
    chart = bar_chart("B", [("a", 1.0)], element_id='X" onload="alert(1)')
    assert chart.chart_id == "x-onload-alert-1"
    tree = assert_inert(chart.figure())
    assert all(not name.startswith("on") for _, name, _ in tree.attributes)
    assert bar_chart("B", [], element_id="<>").chart_id == "chart-b"


def test_a_scatter_puts_each_point_on_two_numeric_axes() -> None:
    chart = scatter_chart(
        "Recall latency by turn",
        {"session 2": [(3.0, 1.5), (1.0, 0.5)], "session 1": [(2.0, 4.0)]},
        x_title="turn",
        y_title="ms",
    )
    svg = svg_of(chart)
    dots = [(float(c.attrs["cx"]), float(c.attrs["cy"])) for c in svg.find_all("circle")]
    assert len(dots) == 3
    # session 1 (drawn first): turn 2, 4.0 ms; higher on the page than session 2's 0.5 ms.
    assert dots[0][1] < dots[1][1] and dots[1][0] < dots[2][0]
    assert cells(chart.table) == [
        ["session 1", "2.00", "4.00"],
        ["session 2", "1.00", "0.50"],
        ["session 2", "3.00", "1.50"],
    ]
    [one] = svg_of(scatter_chart("One", {"a": [(5.0, 5.0)]})).find_all("circle")
    assert one.attrs["cx"] and one.attrs["cy"]
