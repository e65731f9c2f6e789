"""Running a scenario: every sample in fresh stores, every session a run of the built bundle,
then the graders over what the logs and the plan files say.

Sample ``n`` of a scenario in memory mode ``on``/``off`` runs in its own folder,
``<workdir>/<scenario index>-<memory>-<n>/``: nothing a sample stores can reach another one.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from specwire.runtime.core.paths import StoreLayout
from specwire.runtime.evals.agent import BuiltAgent, run_session
from specwire.runtime.evals.graders import Grades, PlanStep, grade
from specwire.runtime.evals.proofs import proven_steps, read_plans
from specwire.runtime.evals.scenario import Scenario
from specwire.runtime.evals.transcript import read_transcripts


class RunFailed(Exception):
    """A session of a sample did not run to its end: one located line."""


@dataclass(frozen=True)
class ModeResult:
    scenario: Scenario | None  # None: a total over several scenarios
    memory: str  # "on" or "off"
    grades: Grades  # summed over the samples
    # How long each auto-recall of every sample took, in milliseconds (session order); a
    # measurement, so never part of the table or the JSON (only the HTML report plots it).
    recall_ms: tuple[float, ...] = ()


@dataclass(frozen=True)
class SampleResult:
    grades: Grades
    recall_ms: tuple[float, ...]


def run_sample(scenario: Scenario, agent: BuiltAgent, folder: Path, what: str) -> SampleResult:
    """Run every session of one sample in ``folder``; grade it."""
    logs: list[Path] = []
    for index, messages in enumerate(scenario.sessions, start=1):
        run = run_session(agent, folder, messages)
        if run.status != 0 or run.log is None:
            lines = [line for line in run.stderr.splitlines() if line.strip()]
            why = lines[-1] if lines else "no session log was written"
            raise RunFailed(
                scenario.located(f"session {index} ({what}) exited with status {run.status}: {why}")
            )
        logs.append(run.log)
    layout = StoreLayout.for_cwd(folder.resolve(), agent.spec_name)
    plans = read_plans(layout.state_dir)
    transcripts = read_transcripts(logs)
    grades = grade(
        transcripts,
        proven_steps(plans, layout.sessions_dir),
        requirements=scenario.requirements,
        pickup=scenario.pickup,
        proven=scenario.proven,
        plan_steps=[
            PlanStep(plan.id, number, step.text)
            for plan in plans
            for number, step in enumerate(plan.steps, start=1)
        ],
    )
    return SampleResult(grades, tuple(ms for t in transcripts for ms in t.recall_ms))


def run_mode(
    scenario: Scenario,
    agent: BuiltAgent,
    memory: str,
    workdir: Path,
    number: int,
    on_sample: Callable[[], None] | None = None,
) -> ModeResult:
    """Every sample of ``scenario`` with memory ``memory``; grades summed over the samples.
    ``on_sample`` is called after each sample (the command's progress)."""
    total = Grades()
    recall_ms: list[float] = []
    for sample in range(1, scenario.samples + 1):
        folder = workdir / f"{number:02d}-{memory}-{sample}"
        what = f"memory {memory}, sample {sample}"
        result = run_sample(scenario, agent, folder, what)
        total = total + result.grades
        recall_ms += result.recall_ms
        if on_sample is not None:
            on_sample()
    return ModeResult(scenario, memory, total, tuple(recall_ms))
