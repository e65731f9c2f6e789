"""``codegen eval SCENARIO… [--memory on|off|both] [--json] [--workdir DIR] [--html FILE]
[--history PATH] [--store PATH]``.

The compiler's command line hands over the arguments and a ``Builder`` (spec path, memory on?)
→ ``BuiltAgent``: compiling is the compiler's job, and the runtime never imports it. With memory
``off`` the builder compiles the same spec with its ``memory`` and ``continuity`` removed (a
memoryless bundle), so the two modes differ only in memory.

``--html FILE`` appends the run to the results history (``--history``, by default
``<FILE's stem>.history.jsonl`` beside it) and writes a self-contained HTML report with plots
(``runtime.evals.report_file``); ``--history`` alone only appends.

Exit status: 0 once every scenario ran (whatever the grades); 2 when a scenario file or its spec
is wrong, a session of the bundle fails, or the report or history cannot be written (one
located line each, never a traceback).
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from collections.abc import Callable, Sequence
from datetime import datetime
from pathlib import Path

from specwire.runtime.core.clock import utc_now
from specwire.runtime.core.errors import StoreError
from specwire.runtime.core.progress import Progress
from specwire.runtime.evals.agent import BuildFailed, BuiltAgent
from specwire.runtime.evals.history import append_history, history_beside, history_record
from specwire.runtime.evals.report import json_text, table
from specwire.runtime.evals.report_file import fact_times, write_report
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
    parser.add_argument(
        "--html",
        type=Path,
        default=None,
        metavar="FILE",
        help="also write a self-contained HTML report with plots to FILE (and append the run "
        "to the history beside it)",
    )
    parser.add_argument(
        "--history",
        type=Path,
        default=None,
        metavar="PATH",
        help="append the run's results to this JSON-lines history (default with --html: "
        "<FILE's stem>.history.jsonl beside the report)",
    )
    parser.add_argument(
        "--store",
        type=Path,
        default=None,
        metavar="PATH",
        help="with --html: a fact store file (.specwire/facts/<spec>.sqlite3) whose growth "
        "over time the report plots",
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
    problems += _output_problems(args)
    if problems:
        return _fail(problems)
    created: list[datetime] | None = None
    if args.store is not None:
        try:
            created = fact_times(args.store)
        except (OSError, StoreError) as exc:
            return _fail([f"codegen eval: --store {args.store}: {_reason(exc)}"])
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
    return _record(args, results, created)


def _output_problems(args: argparse.Namespace) -> list[str]:
    """Where the report and history would go, checked before anything runs."""
    problems: list[str] = []
    if args.store is not None and args.html is None:
        problems.append("codegen eval: --store is for the HTML report: give --html FILE too")
    html, history = args.html, args.history
    if html is not None and history is not None and html.resolve() == history.resolve():
        problems.append("codegen eval: --html and --history must be two different files")
    for flag, path in (("--html", args.html), ("--history", args.history)):
        if path is not None and not path.parent.is_dir():
            problems.append(f"codegen eval: {flag} {path}: its folder does not exist")
        elif path is not None and path.is_dir():
            problems.append(f"codegen eval: {flag} {path}: is a folder")
    return problems


def _record(
    args: argparse.Namespace, results: Sequence[ModeResult], created: list[datetime] | None
) -> int:
    html: Path | None = args.html
    history: Path | None = args.history or (history_beside(html) if html is not None else None)
    if history is None:
        return EXIT_OK
    record = history_record(results, utc_now())
    try:
        append_history(history, record)
    except (OSError, StoreError) as exc:
        return _fail([f"codegen eval: cannot append to {history}: {_reason(exc)}"])
    if html is None:
        return EXIT_OK
    try:
        write_report(html, record, history, created)
    except (OSError, StoreError, ValueError) as exc:
        return _fail([f"codegen eval: cannot write {html}: {_reason(exc)}"])
    sys.stderr.write(f"report written to {html} (history: {history})\n")
    return EXIT_OK


def _reason(exc: BaseException) -> str:
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    if isinstance(exc, FileNotFoundError):
        return "no such file"
    return str(exc) or type(exc).__name__


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
