"""The research host: a batch run that explores ``branching_factor`` branches toward a goal.

Branches run one after another, each a single-turn ``run_chat_loop`` in its own session with the
goal as the user message; they share the catalog and the wired options (so the same stores).
``max_duration_ms`` is a budget for starting branches: once it has passed no new branch starts,
and the summary says how many were skipped (a running branch is not interrupted).

``allowed_origins`` is carried for the retrieval policy, but no network tool exists yet, so
nothing consults it; it is printed in the summary so the run says what it would allow.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from runtime.events import SessionLog
from runtime.hosts.console import (
    describe,
    parse_and_load,
    stderr_log,
    stdout_line,
)
from runtime.hosts.types import SessionBuilder, session_setup
from runtime.ids import new_session_id
from runtime.loop import run_chat_loop
from runtime.models import Model, ModelError
from runtime.paths import StoreLayout
from runtime.seams import LoopOptions
from runtime.secrets import SecretRef
from runtime.tools import ToolCatalog

Clock = Callable[[], float]  # monotonic seconds


@dataclass(frozen=True)
class BranchOutcome:
    index: int
    session_id: str
    reply: str
    stop_reason: str


@dataclass(frozen=True)
class ResearchOutcome:
    branches: list[BranchOutcome]
    skipped: int  # branches not started because the budget ran out


def run_research(
    *,
    spec_name: str,
    model: str | SecretRef,
    instructions: str,
    goal: str,
    branching_factor: int,
    max_duration_ms: int,
    allowed_origins: Sequence[str],
    catalog: ToolCatalog | None = None,
    cwd: Path | None = None,
    options: LoopOptions | None = None,
    argv: Sequence[str] | None = None,
    build_session: SessionBuilder | None = None,
) -> int:
    parser = argparse.ArgumentParser(prog=spec_name, description=f"Run the {spec_name} research.")
    parser.add_argument("--goal", default=None, help="research this goal instead of the spec's")
    started = parse_and_load(parser, argv, model, spec_name)
    if isinstance(started, int):
        return started
    args, chosen = started
    setup = session_setup(build_session, catalog, options)
    try:
        return _research(
            spec_name,
            chosen,
            instructions,
            (args.goal or goal).strip(),
            branching_factor,
            max_duration_ms,
            allowed_origins,
            setup.catalog,
            setup.options,
            cwd,
        )
    finally:
        setup.release()


def _research(
    spec_name: str,
    chosen: Model,
    instructions: str,
    the_goal: str,
    branching_factor: int,
    max_duration_ms: int,
    allowed_origins: Sequence[str],
    catalog: ToolCatalog,
    opts: LoopOptions,
    cwd: Path | None,
) -> int:
    stderr_log(
        f"{spec_name} · research · model {chosen.model_id} · {describe(catalog, opts)} · "
        f"{branching_factor} branch(es) within {max_duration_ms} ms\n"
    )
    layout = StoreLayout.for_cwd((cwd or Path.cwd()).resolve(), spec_name)
    try:
        outcome = explore(
            model=chosen,
            instructions=instructions,
            goal=the_goal,
            branching_factor=branching_factor,
            max_duration_ms=max_duration_ms,
            catalog=catalog,
            sessions_dir=layout.sessions_dir,
            options=opts,
            spec_name=spec_name,
            clock=time.monotonic,
        )
    except KeyboardInterrupt:
        stderr_log("\ninterrupted\n")
        return 130
    except ModelError as exc:
        stderr_log(f"{spec_name}: {exc}\n")
        return 1
    for line in summary(the_goal, branching_factor, max_duration_ms, allowed_origins, outcome):
        stdout_line(line)
    stderr_log(f"session logs: {layout.sessions_dir}\n")
    return 0


def explore(
    *,
    model: Model,
    instructions: str,
    goal: str,
    branching_factor: int,
    max_duration_ms: int,
    catalog: ToolCatalog,
    sessions_dir: Path,
    options: LoopOptions,
    spec_name: str,
    clock: Clock,
    log: Callable[[str], None] = stderr_log,
) -> ResearchOutcome:
    """Run the branches in order; the first always starts, later ones only within budget."""
    deadline = clock() + max_duration_ms / 1000
    branches: list[BranchOutcome] = []
    for index in range(1, branching_factor + 1):
        if index > 1 and clock() >= deadline:
            return ResearchOutcome(branches, branching_factor - len(branches))
        session_log = SessionLog(sessions_dir, new_session_id())
        replies: list[str] = []
        result = run_chat_loop(
            model=model,
            instructions=instructions,
            catalog=catalog,
            session_log=session_log,
            inputs=[goal],
            output=replies.append,
            single_turn=True,
            spec_name=spec_name,
            target="research",
            session_info={"branch": index, "branches": branching_factor},
            log=log,
            **options,
        )
        branches.append(
            BranchOutcome(index, result.session_id, "\n".join(replies), result.stop_reason)
        )
    return ResearchOutcome(branches, 0)


def summary(
    goal: str,
    branching_factor: int,
    max_duration_ms: int,
    allowed_origins: Sequence[str],
    outcome: ResearchOutcome,
) -> list[str]:
    lines = [f"research goal: {goal.splitlines()[0] if goal else '(none)'}"]
    for branch in outcome.branches:
        reply = branch.reply.splitlines()[0] if branch.reply else "(no answer)"
        lines.append(f"[branch {branch.index}/{branching_factor}] {branch.session_id}: {reply}")
    ran = len(outcome.branches)
    if outcome.skipped:
        lines.append(
            f"research: the {max_duration_ms} ms budget ran out after {ran} of "
            f"{branching_factor} branch(es); {outcome.skipped} not started"
        )
    else:
        lines.append(f"research: {ran} of {branching_factor} branch(es) ran")
    origins = ", ".join(allowed_origins) or "none"
    lines.append(f"allowed origins: {origins} (no network tool is available yet)")
    return lines
