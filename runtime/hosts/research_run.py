"""One research run: split the goal, run the branches concurrently, synthesize, under a deadline.

- **Plan.** A planning session (the run's root: its id is the run id) asks the model to split
  the goal into ``branching_factor`` sub-goals, as a JSON array of strings (numbered lines are
  accepted too; missing ones are filled with angles of the goal). It runs without tools.
- **Branches.** Each sub-goal is the user message of its own single-turn session, linked to the
  root (``parent``, ``runId``, ``branch`` in ``session_start``), all started at once in their
  own threads and sharing the catalog and the wired stores, so a fact one branch remembers or a
  plan step it proves is visible to the others and to the synthesis.
- **Deadline.** ``max_duration_ms`` after the start, every session stops before its next model
  call (``run_chat_loop``'s ``deadline``). The host waits for the branches until the deadline
  plus ``GRACE_S`` (a model call or a tool already running is not interrupted); a branch still
  running then is reported as cut off and left behind (its thread is a daemon).
- **Synthesis.** When time remains, one more session (linked like a branch) gets the findings
  and writes the summary; auto-recall brings in what the branches remembered.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from specwire.runtime.core.ids import new_session_id
from specwire.runtime.core.seams import LoopOptions
from specwire.runtime.core.tool_types import ToolCatalog
from specwire.runtime.hosts.activity import Activity
from specwire.runtime.loop import run_chat_loop
from specwire.runtime.models import Model, ModelError
from specwire.runtime.sessions.log import SessionLog
from specwire.runtime.sessions.store import LogSource, SessionLogs, SessionRecorder

GRACE_S = 30.0
_CUT_OFF = "[stopped: the tool-round limit"
_NUMBERED = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s*")


@dataclass
class SessionOutcome:
    label: str  # "plan", "branch 2/3", "synthesis"
    session_id: str
    task: str
    reply: str = ""
    stop_reason: str = "running"  # complete | deadline | abort | error | running (cut off)
    error: str | None = None
    started: float = 0.0
    ended: float | None = None


@dataclass
class ResearchRun:
    run_id: str
    goal: str
    branching_factor: int
    max_duration_ms: int
    plan: SessionOutcome
    branches: list[SessionOutcome] = field(default_factory=list)
    synthesis: SessionOutcome | None = None

    @property
    def sessions(self) -> list[SessionOutcome]:
        return [self.plan, *self.branches, *([self.synthesis] if self.synthesis else [])]

    @property
    def complete(self) -> bool:
        return (
            self.synthesis is not None
            and self.synthesis.stop_reason == "complete"
            and all(branch.stop_reason == "complete" for branch in self.branches)
        )


@dataclass(frozen=True)
class RunContext:
    model: Model
    instructions: str
    catalog: ToolCatalog
    options: LoopOptions
    sessions_dir: Path
    spec_name: str
    deadline: float
    log: Callable[[str], None]
    # Per-session progress on a terminal (``runtime.hosts.activity``); None: none.
    activity: Activity | None = None
    # Where the sessions log (the database with memory.state: postgres); None: files in
    # ``sessions_dir``.
    session_logs: SessionLogs | None = None

    def session_log(self, session_id: str) -> SessionRecorder:
        if self.session_logs is not None:
            return self.session_logs.open(session_id)
        return SessionLog(self.sessions_dir, session_id)

    @property
    def log_source(self) -> LogSource:
        """Where the run's logs are read back (the report)."""
        return self.session_logs if self.session_logs is not None else self.sessions_dir


def run_research_goal(
    ctx: RunContext, goal: str, branching_factor: int, max_duration_ms: int
) -> ResearchRun:
    run_id = new_session_id()
    plan = SessionOutcome("plan", run_id, split_prompt(goal, branching_factor))
    run = ResearchRun(run_id, goal, branching_factor, max_duration_ms, plan)
    _run_session(ctx, plan, ToolCatalog(), {"runId": run_id, "phase": "plan"}, use_memory=False)
    sub_goals = parse_sub_goals(plan.reply, goal, branching_factor)
    run.branches = [
        SessionOutcome(f"branch {index}/{branching_factor}", new_session_id(), sub_goal)
        for index, sub_goal in enumerate(sub_goals, start=1)
    ]
    threads = [
        threading.Thread(
            target=_run_session,
            args=(
                ctx,
                branch,
                ctx.catalog,
                {
                    "runId": run_id,
                    "parent": run_id,
                    "branch": index,
                    "branches": branching_factor,
                },
            ),
            name=f"research-branch-{index}",
            daemon=True,
        )
        for index, branch in enumerate(run.branches, start=1)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=max(0.0, ctx.deadline + GRACE_S - time.monotonic()))
    if time.monotonic() < ctx.deadline:
        synthesis = SessionOutcome("synthesis", new_session_id(), synthesis_prompt(run))
        run.synthesis = synthesis
        _run_session(
            ctx, synthesis, ctx.catalog, {"runId": run_id, "parent": run_id, "phase": "synthesis"}
        )
    return run


def split_prompt(goal: str, count: int) -> str:
    return (
        f"Answer with a JSON array of exactly {count} strings: self-contained sub-goals that "
        "together cover the research goal below, each one a task for its own researcher.\n\n"
        f"split into {count} sub-goals: {goal.strip()}"
    )


def parse_sub_goals(reply: str, goal: str, count: int) -> list[str]:
    """``count`` sub-goals from the planner's answer: a JSON array (also inside a code fence),
    else its numbered or bulleted lines; angles of the goal fill what is missing."""
    found: list[str] = []
    text = reply.strip()
    fenced = re.search(r"\[.*\]", text, re.DOTALL)
    if fenced is not None:
        try:
            value: Any = json.loads(fenced.group(0))
        except ValueError:
            value = None
        if isinstance(value, list):
            found = [item.strip() for item in value if isinstance(item, str) and item.strip()]
    if not found:
        found = [_NUMBERED.sub("", line).strip() for line in text.splitlines()]
        found = [line for line in found if line]
    subject = goal.strip().splitlines()[0] if goal.strip() else "the goal"
    while len(found) < count:
        found.append(f"{subject} (angle {len(found) + 1} of {count})")
    return found[:count]


def synthesis_prompt(run: ResearchRun) -> str:
    lines = [f"Write the research summary for: {run.goal.strip()}", "", "Findings per branch:"]
    for branch in run.branches:
        reply = branch.reply.strip() or "(no answer)"
        lines.append(f"- {branch.label} [{branch.stop_reason}]: {reply}")
    return "\n".join(lines)


def _run_session(
    ctx: RunContext,
    outcome: SessionOutcome,
    catalog: ToolCatalog,
    info: dict[str, Any],
    *,
    use_memory: bool = True,
) -> None:
    outcome.started = time.time()
    replies: list[str] = []
    options = ctx.options if use_memory else LoopOptions()
    activity = ctx.activity
    if activity is not None:
        activity.note(outcome.label, f"started: {first_line(outcome.task)}")
    try:
        result = run_chat_loop(
            model=ctx.model,
            instructions=ctx.instructions,
            catalog=catalog,
            session_log=ctx.session_log(outcome.session_id),
            inputs=[outcome.task],
            output=replies.append,
            single_turn=True,
            spec_name=ctx.spec_name,
            target="research",
            session_info=info,
            log=ctx.log,
            deadline=ctx.deadline,
            stream=None if activity is None else activity.sink(outcome.label),
            **options,
        )
        outcome.stop_reason = result.stop_reason
        if result.stop_reason == "complete" and any(
            line.startswith(_CUT_OFF) for reply in replies for line in reply.splitlines()
        ):
            outcome.stop_reason = "limit"  # the turn hit the tool-round limit: unfinished
    except ModelError as exc:
        outcome.stop_reason, outcome.error = "error", str(exc)
        ctx.log(f"[research] {outcome.label}: {exc}\n")
    except Exception as exc:  # a branch must never take the run (and its report) down
        outcome.stop_reason, outcome.error = "error", f"{type(exc).__name__}: {exc}"
        ctx.log(f"[research] {outcome.label} failed: {outcome.error}\n")
    outcome.reply = "\n".join(replies)
    outcome.ended = time.time()


def first_line(text: str) -> str:
    return next((line.strip() for line in text.splitlines() if line.strip()), "")
