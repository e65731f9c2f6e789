"""``codegen eval SCENARIO… [--memory on|off|both] [--json] [--workdir DIR]``.

The compiler's command line hands over the arguments and a ``Builder`` (spec path, memory on?)
→ ``BuiltAgent``: compiling is the compiler's job, and the runtime never imports it. With memory
``off`` the builder compiles the same spec with its ``memory`` and ``continuity`` removed (a
memoryless bundle), so the two modes differ only in memory.

Exit status: 0 once every scenario ran (whatever the grades); 2 when a scenario file or its spec
is wrong, or a session of the bundle fails (one located line each, never a traceback).
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

from specwire.runtime.core.progress import Progress
from specwire.runtime.evals.agent import BuildFailed, BuiltAgent
from specwire.runtime.evals.report import json_text, table
from specwire.runtime.evals.runner import ModeResult, RunFailed, run_mode
from specwire.runtime.evals.scenario import Scenario, ScenarioError, load_scenario

Builder = Callable[[Path, bool], BuiltAgent]
EXIT_OK = 0
EXIT_BAD_INPUT = 2
MODES = {"on": ("on",), "off": ("off",), "both": ("on", "off")}
EVAL_TARGETS = ("cli",)

__all__ = ["BuildFailed", "Builder", "BuiltAgent", "main"]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="codegen eval",
        description="Run continuity scenarios against their built bundles and grade them: "
        "re-ask rate, requirement retention, proof honesty, pick-up success, cost per proven "
        "outcome.",
    )
    parser.add_argument(
        "scenarios",
        nargs="+",
        type=Path,
        metavar="SCENARIO",
        help="a scenario file (YAML: the spec to build, the sessions, what should hold)",
    )
    parser.add_argument(
        "--memory",
        choices=list(MODES),
        default="both",
        help="run the bundle as built (on), without memory and continuity (off), or both "
        "(default: both)",
    )
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    parser.add_argument(
        "--workdir",
        type=Path,
        default=None,
        metavar="DIR",
        help="run the samples in a new folder under DIR and keep them (default: a temporary "
        "folder, removed afterwards)",
    )
    return parser


def main(argv: Sequence[str], build: Builder) -> int:
    try:
        args = _parser().parse_args(list(argv))
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else EXIT_BAD_INPUT
    problems: list[str] = []
    scenarios: list[Scenario] = []
    for path in args.scenarios:
        try:
            scenarios.append(load_scenario(path))
        except ScenarioError as exc:
            problems.extend(exc.lines)
    if problems:
        return _fail(problems)
    modes: tuple[str, ...] = MODES[args.memory]
    try:
        agents = _build_all(scenarios, modes, build)
    except BuildFailed as exc:
        return _fail(list(exc.lines))
    workdir: Path | None = args.workdir
    temporary = workdir is None
    try:
        if workdir is not None:
            workdir.mkdir(parents=True, exist_ok=True)
        root = Path(tempfile.mkdtemp(prefix="specwire-eval-", dir=workdir))
    except OSError as exc:
        return _fail([f"codegen eval: cannot create a folder under {workdir}: {exc.strerror}"])
    if not temporary:
        sys.stderr.write(f"samples kept in {root}\n")
    try:
        results = _run_all(scenarios, modes, agents, root)
    except RunFailed as exc:
        return _fail([str(exc)])
    finally:
        if temporary:
            shutil.rmtree(root, ignore_errors=True)
    sys.stdout.write(json_text(results) if args.json else table(results))
    sys.stdout.flush()
    return EXIT_OK


def _build_all(
    scenarios: Sequence[Scenario], modes: Sequence[str], build: Builder
) -> dict[tuple[Path, str], BuiltAgent]:
    agents: dict[tuple[Path, str], BuiltAgent] = {}
    problems: list[str] = []
    for scenario in scenarios:
        for mode in modes:
            key = (scenario.spec.resolve(), mode)
            if key in agents:
                continue
            try:
                agent = build(scenario.spec, mode == "on")
            except BuildFailed as exc:
                problems.extend(line for line in exc.lines if line not in problems)
                break
            if agent.target not in EVAL_TARGETS:
                problems.append(
                    scenario.located(
                        f"{scenario.spec} is a {agent.target} spec; eval runs "
                        f"{' and '.join(EVAL_TARGETS)} specs"
                    )
                )
                break
            agents[key] = agent
    if problems:
        raise BuildFailed(problems)
    return agents


def _run_all(
    scenarios: Sequence[Scenario],
    modes: Sequence[str],
    agents: dict[tuple[Path, str], BuiltAgent],
    root: Path,
) -> list[ModeResult]:
    results: list[ModeResult] = []
    samples = sum(scenario.samples for scenario in scenarios) * len(modes)
    with Progress("eval: samples", samples) as progress, progress.ticking():
        for number, scenario in enumerate(scenarios, start=1):
            for mode in modes:
                agent = agents[(scenario.spec.resolve(), mode)]
                progress.note = f"{scenario.path.name}, memory {mode}"
                results.append(
                    run_mode(scenario, agent, mode, root, number, on_sample=progress.advance)
                )
    return results


def _fail(lines: Sequence[str]) -> int:
    for line in lines:
        sys.stderr.write(f"{line}\n")
    sys.stderr.flush()
    return EXIT_BAD_INPUT
