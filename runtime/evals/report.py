"""The results as a table (scenario × memory × grader) or as JSON (``--json``).

A grader with nothing to measure (no question asked, no later session, no proven step, no
pick-up expected) shows ``–`` in the table and ``null`` in the JSON, with its counts beside it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from specwire.runtime.evals.graders import Grades, Ratio
from specwire.runtime.evals.runner import ModeResult

COLUMNS = (
    "scenario",
    "memory",
    "re-ask rate",
    "req retention",
    "proof honesty",
    "pick-up",
    "tokens/proven",
)
NONE = "–"
ALL = "(all)"


def _ratio(ratio: Ratio) -> str:
    value = ratio.value
    return NONE if value is None else f"{value:.2f} ({ratio.hits}/{ratio.total})"


def _cost(grades: Grades) -> str:
    cost = grades.cost_per_proven
    if cost is None:
        return f"{NONE} ({grades.tokens} tok, 0 proven)"
    return f"{cost:.0f} ({grades.tokens} tok/{grades.proven})"


def row(result: ModeResult) -> list[str]:
    g = result.grades
    return [
        result.scenario.name if result.scenario is not None else ALL,
        result.memory,
        _ratio(g.reask),
        _ratio(g.retention),
        _ratio(g.proof_honesty),
        _ratio(g.pickup),
        _cost(g),
    ]


def totals(results: Sequence[ModeResult]) -> list[ModeResult]:
    """One ``(all)`` result per memory mode, every scenario's grades summed (when there are
    several scenarios)."""
    if len({result.scenario.path for result in results if result.scenario is not None}) < 2:
        return []
    summed: dict[str, Grades] = {}
    for result in results:
        summed[result.memory] = summed.get(result.memory, Grades()) + result.grades
    return [ModeResult(None, memory, grades) for memory, grades in summed.items()]


def table(results: Sequence[ModeResult]) -> str:
    rows = [list(COLUMNS), *(row(result) for result in [*results, *totals(results)])]
    widths = [max(len(r[i]) for r in rows) for i in range(len(COLUMNS))]
    lines = ["  ".join(cell.ljust(widths[i]) for i, cell in enumerate(r)).rstrip() for r in rows]
    lines.insert(1, "  ".join("-" * width for width in widths))
    return "\n".join(lines) + "\n"


def _value(ratio: Ratio) -> float | None:
    value = ratio.value
    return None if value is None else round(value, 4)


def result_data(result: ModeResult) -> dict[str, Any]:
    g = result.grades
    cost = g.cost_per_proven
    scenario = result.scenario
    where: dict[str, Any] = {"scenario": ALL}
    if scenario is not None:
        where = {
            "scenario": scenario.name,
            "file": str(scenario.path),
            "spec": str(scenario.spec),
            "samples": scenario.samples,
        }
    return {
        **where,
        "memory": result.memory,
        "graders": {
            "reAskRate": {
                "value": _value(g.reask),
                "reasked": g.reask.hits,
                "questions": g.reask.total,
            },
            "requirementRetention": {
                "value": _value(g.retention),
                "visible": g.retention.hits,
                "pairs": g.retention.total,
            },
            "proofHonesty": {
                "value": _value(g.proof_honesty),
                "backed": g.proof_honesty.hits,
                "proven": g.proof_honesty.total,
                "unbacked": g.unbacked,
                "expectedProven": g.expected_proven.hits,
                "expected": g.expected_proven.total,
            },
            "pickupSuccess": {
                "value": _value(g.pickup),
                "pickedUp": g.pickup.hits,
                "samples": g.pickup.total,
            },
            "costPerProvenOutcome": {
                "value": None if cost is None else round(cost, 2),
                "unit": "tokens",
                "tokens": g.tokens,
                "provenSteps": g.proven,
            },
        },
    }


def json_text(results: Sequence[ModeResult]) -> str:
    data = {
        "results": [result_data(result) for result in results],
        "totals": [result_data(result) for result in totals(results)],
    }
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"
