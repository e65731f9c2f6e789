"""The charts pinned byte for byte as SVG files a reviewer can open
(``tests/runtime/evals/__snapshots__/test_chart_snapshots/``). After an intended change to the
drawing, regenerate with ``pytest tests/runtime/evals/test_chart_snapshots.py --snapshot-update``
and look at the files."""

from __future__ import annotations

import pytest
from syrupy.assertion import SnapshotAssertion
from syrupy.extensions.image import SVGImageSnapshotExtension

from specwire.runtime.evals.charts import grouped_bar_chart, histogram, line_chart, scatter_chart


@pytest.fixture
def svg_snapshot(snapshot: SnapshotAssertion) -> SnapshotAssertion:
    return snapshot.use_extension(SVGImageSnapshotExtension)


def test_scores_over_runs(svg_snapshot: SnapshotAssertion) -> None:
    chart = line_chart(
        "Scores over runs, memory on",
        {
            "re-ask": [(1, 0.5), (2, 0.25), (3, 0.0), (4, 0.0)],
            "retention": [(1, 0.5), (2, 0.75), (3, 0.75), (4, 1.0)],
            "pick-up": [(1, None), (2, None), (3, 1.0), (4, 1.0)],
        },
        x_labels={1: "2026-11-28 09:00", 2: "2026-11-29 09:00", 3: "2026-11-30 09:00"},
        x_title="run",
        y_title="rate",
        y_range=(0.0, 1.0),
    )
    assert chart.svg == svg_snapshot


def test_rates_per_scenario(svg_snapshot: SnapshotAssertion) -> None:
    chart = grouped_bar_chart(
        "Re-ask rate",
        [
            ("ops-notes-recall", {"memory on": 0.0, "memory off": 0.67}),
            ("plan-pickup", {"memory on": 0.0, "memory off": 0.5}),
            ("requirement-survives", {"memory on": None, "memory off": 0.67}),
        ],
        x_title="scenario",
        y_title="re-ask rate",
        y_range=(0.0, 1.0),
    )
    assert chart.svg == svg_snapshot


def test_recall_latency(svg_snapshot: SnapshotAssertion) -> None:
    chart = histogram(
        "Recall latency", [0.42, 0.61, 1.3, 1.9, 2.2, 7.5, 12.25], unit="ms", x_title="ms"
    )
    assert chart.svg == svg_snapshot


def test_latency_by_turn(svg_snapshot: SnapshotAssertion) -> None:
    chart = scatter_chart(
        "Recall latency by turn",
        {"session 1": [(1, 0.8), (2, 1.1), (3, 0.9)], "session 2": [(1, 2.4), (2, 0.7)]},
        x_title="turn",
        y_title="ms",
    )
    assert chart.svg == svg_snapshot
