"""The research host: a batch run that fans a goal out into concurrent branches and reports.

``python agent.py [--goal TEXT] [--out DIR]``: the goal is split into ``branching_factor``
sub-goals, the branches run concurrently under the ``max_duration_ms`` deadline, a synthesis
session summarizes them, and ``report.md`` is written to ``<out>/<run id>/`` (default
``research-runs/`` in the working directory) and its path printed. See
``runtime.hosts.research_run`` for the run and ``runtime.hosts.research_report`` for the report.
On a terminal, stderr shows each session's progress as it goes (``runtime.hosts.activity``).

``mcp_servers`` (the spec's MCP tool servers) are started once, after the start checks and
before the run, as on cli (``runtime.hosts.tool_servers``: working in the working directory; one
line and exit 2 when one that is not ``optional`` does not start); their tools, as
``mcp__<server>__<tool>``, join the shared catalog every branch and the synthesis use. They are
stopped when the run ends.

With ``retrieve.allowedOrigins`` the branches get the ``fetch`` tool (``runtime.tools.fetch``:
HTTP GET within those origins only, redirects included).

The report's folders are opened one component at a time without following a link
(``runtime.fs.safe_open.open_dir_beneath``) and the file is replaced inside the opened folder
(``runtime.fs.atomic.replace_at``): a symlink the agent's shell planted at ``research-runs/`` (or
below it) is refused, never written through. A relative ``--out`` is walked the same way from
the working directory; an absolute one is the owner's choice and trusted as given, its run
folder still opened without following a link.

Exit status: 0 complete (every branch and the synthesis finished), 3 partial (the deadline cut
something off, or a session failed: the report says which), 2 a start-up error (one line), 130
interrupted, 1 the report could not be written (one line).
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from specwire.runtime.continuity.plans import Plan
from specwire.runtime.continuity.store import ContinuityStore
from specwire.runtime.core.errors import StoreError, UnsafeFileError
from specwire.runtime.core.paths import StoreLayout
from specwire.runtime.core.tool_types import Tool
from specwire.runtime.core.volume import DocumentVolume
from specwire.runtime.fs.atomic import replace_at
from specwire.runtime.fs.safe_open import open_dir_beneath
from specwire.runtime.hosts.activity import Activity
from specwire.runtime.hosts.console import describe, parse_and_load, stderr_log, stdout_line
from specwire.runtime.hosts.preflight import StartCheck, bundle_fragment
from specwire.runtime.hosts.research_report import render
from specwire.runtime.hosts.research_run import (
    ResearchRun,
    RunContext,
    first_line,
    run_research_goal,
)
from specwire.runtime.hosts.session_logs import database_session_logs
from specwire.runtime.hosts.tool_servers import host_tool_servers
from specwire.runtime.hosts.types import SessionBuilder
from specwire.runtime.safety.secrets import SecretRef
from specwire.runtime.wiring import parse_fragment, state_volume

EXIT_PARTIAL = 3
EXIT_NO_REPORT = 1
DEFAULT_OUT = "research-runs"


def run_research(
    *,
    spec_name: str,
    model: str | SecretRef,
    instructions: str,
    goal: str,
    branching_factor: int,
    max_duration_ms: int,
    allowed_origins: Sequence[str],
    cwd: Path | None = None,
    argv: Sequence[str] | None = None,
    build_session: SessionBuilder,
    memory: Mapping[str, Any] | None = None,
    mcp_servers: Mapping[str, Mapping[str, Any]] | None = None,
) -> int:
    parser = argparse.ArgumentParser(
        prog=spec_name,
        description=f"Run the {spec_name} research.",
        epilog="Exit status: 0 complete, 3 partial (the report says what was cut off), "
        "2 a start-up error.",
    )
    parser.add_argument("--goal", default=None, help="research this goal instead of the spec's")
    parser.add_argument(
        "--out", type=Path, default=None, help=f"where reports go (default: ./{DEFAULT_OUT})"
    )
    check = StartCheck(
        spec_name, (("agent.model", model),), bundle_fragment(memory, build_session), cwd=cwd
    )
    started = parse_and_load(parser, argv, model, spec_name, check)
    if isinstance(started, int):
        return started
    args, chosen = started
    fetch = _fetch_tool(allowed_origins, spec_name)
    if isinstance(fetch, int):
        return fetch
    base = (cwd or Path.cwd()).resolve()
    servers = host_tool_servers(mcp_servers, check.memory, stderr_log)
    if servers is not None:  # once, for every branch: in the working directory
        servers.start("", base)
    try:
        setup = build_session()
    except BaseException:
        if servers is not None:
            servers.close()
        raise
    try:
        if servers is not None:
            setup = servers.extend(setup, "")
        if fetch is not None and setup.catalog.get(fetch.name) is None:
            setup.catalog.register(fetch)
        the_goal = (args.goal or goal).strip()
        stderr_log(
            f"{spec_name} · research · model {chosen.model_id} · "
            f"{describe(setup.catalog, setup.options)} · {branching_factor} concurrent "
            f"branch(es) within {max_duration_ms} ms · fetch: "
            f"{', '.join(allowed_origins) if fetch is not None else 'off'}\n"
        )
        layout = StoreLayout.for_cwd(base, spec_name)
        # memory.state: postgres: every session logs in the database and the plan the report
        # shows is the state volume's; no file is written but the report.
        logs = database_session_logs(check.memory, spec_name, cwd)
        volume = _state_volume(check.memory, layout)
        ctx = RunContext(
            model=chosen,
            instructions=instructions,
            catalog=setup.catalog,
            options=setup.options,
            sessions_dir=layout.sessions_dir,
            spec_name=spec_name,
            deadline=time.monotonic() + max_duration_ms / 1000,
            log=stderr_log,
            activity=Activity(),
            session_logs=logs,
        )
        try:
            run = run_research_goal(ctx, the_goal, branching_factor, max_duration_ms)
        except KeyboardInterrupt:
            stderr_log("\ninterrupted\n")
            return 130
        out = args.out if args.out is not None else Path(DEFAULT_OUT)
        try:
            report = _write_report(run, ctx, layout, base, out, volume)
        except (UnsafeFileError, OSError, ValueError) as exc:
            stderr_log(f"{spec_name}: the report was not written: {exc}\n")
            return EXIT_NO_REPORT
    finally:
        setup.release()
        if servers is not None:
            servers.close()
    for line in summary_lines(run):
        stdout_line(line)
    stdout_line(f"report: {report}")
    where = "in the database" if logs is not None else str(layout.sessions_dir)
    stderr_log(f"session logs: {where}\n")
    return 0 if run.complete else EXIT_PARTIAL


def _fetch_tool(origins: Sequence[str], spec_name: str) -> Tool | int | None:
    if not origins:
        return None
    from specwire.runtime.tools.fetch import fetch_problem, fetch_tool

    problem = fetch_problem()
    if problem is not None:
        stderr_log(f"{spec_name}: {problem}\n")
        return 2
    try:
        return fetch_tool(origins)
    except ValueError as exc:
        stderr_log(f"{spec_name}: retrieve.allowedOrigins: {exc}\n")
        return 2


def report_folder(base: Path, out: Path) -> tuple[Path, tuple[str, ...]]:
    """(the trusted root, the components below it that are opened without following links)."""
    spelled = Path(os.path.normpath(out))
    if spelled.is_absolute() or spelled.parts[:1] == ("..",):
        return (base / spelled).resolve(), ()
    return base, tuple(part for part in spelled.parts if part != ".")


def _write_report(
    run: ResearchRun,
    ctx: RunContext,
    layout: StoreLayout,
    base: Path,
    out: Path,
    volume: DocumentVolume | None,
) -> Path:
    root, parts = report_folder(base, out)
    text = render(run, ctx.log_source, _active_plan(layout, volume))
    folder_fd = open_dir_beneath(root, (*parts, run.run_id), create=True, mode=0o777)
    assert folder_fd is not None  # created
    try:
        replace_at(folder_fd, "report.md", text.encode("utf-8"))
    finally:
        os.close(folder_fd)
    return root.joinpath(*parts, run.run_id, "report.md")


def _state_volume(memory: Mapping[str, Any] | None, layout: StoreLayout) -> DocumentVolume | None:
    """The spec's state volume in PostgreSQL (``memory.state: postgres``); None: files."""
    if memory is None:
        return None
    return state_volume(parse_fragment(memory), layout, None)


def _active_plan(layout: StoreLayout, volume: DocumentVolume | None) -> Plan | None:
    """The plan the run worked under: the state volume's, or the files' (None when none)."""
    if volume is None and not layout.state_dir.is_dir():
        return None
    try:
        return ContinuityStore(layout, volume=volume).active_plan()
    except (StoreError, OSError):
        return None


def summary_lines(run: ResearchRun) -> list[str]:
    lines = [f"research goal: {first_line(run.goal) or '(none)'}"]
    for branch in run.branches:
        reply = first_line(branch.reply) or "(no answer)"
        lines.append(f"[{branch.label}] {branch.session_id} ({branch.stop_reason}): {reply}")
    if run.synthesis is not None:
        lines.append(f"[synthesis] {first_line(run.synthesis.reply) or '(no answer)'}")
    state = "complete" if run.complete else "partial"
    lines.append(f"research: {state} — {len(run.branches)} branch(es), run {run.run_id}")
    return lines
