"""Eval results to render: two memory modes of one scenario, with known counts."""

from __future__ import annotations

from pathlib import Path

from specwire.runtime.evals.graders import Grades, Ratio
from specwire.runtime.evals.runner import ModeResult
from specwire.runtime.evals.scenario import Scenario


def scenario(name: str) -> Scenario:
    return Scenario(name, Path(f"evals/{name}.yaml"), Path("support-bot.yaml"), 1, (("hi",),))


def mode_results(name: str = "plan-pickup", *, reasked: int = 0) -> list[ModeResult]:
    on = Grades(
        reask=Ratio(reasked, 2),
        retention=Ratio(3, 4),
        proof_honesty=Ratio(2, 2),
        pickup=Ratio(1, 1),
        tokens=1200,
        proven=2,
    )
    off = Grades(reask=Ratio(1, 2), retention=Ratio(0, 4), pickup=Ratio(0, 1), tokens=300)
    return [
        ModeResult(scenario(name), "on", on, (0.4, 0.6, 2.5)),
        ModeResult(scenario(name), "off", off),
    ]
