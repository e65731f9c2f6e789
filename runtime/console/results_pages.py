"""Eval results (``codegen eval --json`` outputs) and the dream's last run, as tables.

Plots: each picture has one function here (``eval_scores_plot``, ``memory_growth_plot``) that
returns the figure's markup, or None while there is no chart module to draw it; the tables
carry the same numbers either way.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from specwire.runtime.console.html import Content, Markup, definitions, table, tag
from specwire.runtime.console.view import View

GRADERS = (
    ("reAskRate", "re-ask rate"),
    ("requirementRetention", "req retention"),
    ("proofHonesty", "proof honesty"),
    ("pickupSuccess", "pick-up"),
    ("costPerProvenOutcome", "tokens/proven"),
)


def eval_scores_plot(runs: Sequence[tuple[str, dict[str, Any]]]) -> Markup | None:
    """Eval scores over runs, one line per grader: the seam for the chart module
    (``runtime.evals.charts``, not on this branch yet); None draws nothing."""
    return None


def memory_growth_plot(counts: Sequence[tuple[str, int]]) -> Markup | None:
    """Live facts over time: the seam for the chart module; None draws nothing."""
    return None


def _grade(result: dict[str, Any], name: str) -> str:
    graders = result.get("graders")
    value = graders.get(name, {}).get("value") if isinstance(graders, dict) else None
    return "–" if not isinstance(value, int | float) else f"{value:g}"


def results(view: View) -> tuple[str, Markup]:
    runs = view.data.eval_runs(view.evals_dir)
    rows: list[list[Content]] = []
    for name, data in runs:
        for result in data.get("results", []):
            if not isinstance(result, dict):
                continue
            rows.append(
                [
                    name,
                    str(result.get("scenario", "")),
                    str(result.get("memory", "")),
                    *[_grade(result, key) for key, _ in GRADERS],
                ]
            )
    plot = eval_scores_plot(runs)
    state = view.data.dream_state()
    dream: Content = tag("p", "the dream has not run here", class_="note")
    if state is not None:
        outcome = state.get("lastOutcome")
        dream = [
            definitions(
                [
                    ("last run", str(state.get("lastRunAt", ""))),
                    ("status", str(state.get("status", ""))),
                    ("window", str(state.get("windowKey", ""))),
                ]
            ),
            tag(
                "pre",
                json.dumps(outcome, ensure_ascii=False, indent=1, sort_keys=True)
                if outcome is not None
                else "(no outcome)",
                id="dream-outcome",
            ),
        ]
    body = [
        tag("h2", "Eval runs"),
        plot,
        table(("run", "scenario", "memory", *[label for _, label in GRADERS]), rows, id="evals"),
        tag(
            "p",
            "no eval results: save `codegen eval --json` output as <state>/evals/<run>.json"
            if not rows
            else None,
            class_="note",
        ),
        tag("h2", "Dream"),
        dream,
    ]
    return "Evals & dream", Markup("".join(str(part) for part in body))
