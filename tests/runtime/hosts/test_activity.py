"""hosts.activity: research branches and crew roles show their progress on a terminal only."""

from __future__ import annotations

import io
import time
from pathlib import Path

import pytest

from specwire.runtime.core.seams import LoopOptions
from specwire.runtime.core.tool_types import ToolCatalog
from specwire.runtime.hosts.activity import Activity
from specwire.runtime.hosts.research_run import RunContext, run_research_goal
from specwire.runtime.models.scripted import ScriptedModel
from specwire.runtime.models.streaming import (
    StreamCancelled,
    TextDelta,
    ToolArgumentsDelta,
    ToolCallStarted,
    ToolDone,
    ToolRunning,
    TurnDone,
)


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_session_sink_reports_its_steps_once_each() -> None:
    err = _Tty()
    activity = Activity(lambda: err)
    sink = activity.sink("branch 1/2")
    assert sink is not None
    for event in (
        TextDelta("Let "),
        TextDelta("me look."),
        ToolCallStarted("c1", "fetch"),
        ToolArgumentsDelta("c1", '{"url": "https://example.org/\\u001b[2J"}'),
        ToolRunning("c1", "fetch"),
        ToolDone("c1", "fetch", True),
        TextDelta("Found it."),
        TurnDone("Found it."),
    ):
        sink(event)
    assert err.getvalue().splitlines() == [
        "  [branch 1/2] writing…",
        "  [branch 1/2] ↳ fetch https://example.org/ [2J",
        "  [branch 1/2] ↳ fetch failed",
        "  [branch 1/2] writing…",
        "  [branch 1/2] done",
    ]


def test_nothing_is_shown_or_streamed_when_stderr_is_not_a_terminal() -> None:
    piped = io.StringIO()
    activity = Activity(lambda: piped)
    assert activity.sink("plan") is None
    activity.note("plan", "started")
    assert piped.getvalue() == ""


def test_a_stop_request_cancels_the_session_but_not_its_finished_turn() -> None:
    stopping = False
    sink = Activity(lambda: io.StringIO(), stop=lambda: stopping).sink("reviewer ← lead")
    assert sink is not None
    sink(TextDelta("ok"))
    stopping = True
    with pytest.raises(StreamCancelled):
        sink(TextDelta("more"))
    sink(TurnDone("ok"))


def test_a_research_run_shows_each_branch_start_and_end(tmp_path: Path) -> None:
    err = _Tty()
    ctx = RunContext(
        model=ScriptedModel(),
        instructions="You research.",
        catalog=ToolCatalog(),
        options=LoopOptions(),
        sessions_dir=tmp_path / "sessions",
        spec_name="probe",
        deadline=time.monotonic() + 600,
        log=lambda _: None,
        activity=Activity(lambda: err),
    )
    run = run_research_goal(ctx, "tides\n\nwinds", 2, 600_000)
    assert run.complete
    lines = err.getvalue().splitlines()
    for label in ("plan", "branch 1/2", "branch 2/2", "synthesis"):
        mine = [line for line in lines if line.startswith(f"  [{label}] ")]
        assert mine[0].startswith(f"  [{label}] started: ")
        assert mine[-1] == f"  [{label}] done"
