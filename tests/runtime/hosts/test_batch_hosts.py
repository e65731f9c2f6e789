"""The research and crew hosts: branches and roles sharing one catalog and one set of options."""

from __future__ import annotations

from itertools import count
from pathlib import Path

import pytest
from hosts_support import echo_catalog, of_kind, session_logs

from runtime.hosts.crew import run_crew
from runtime.hosts.research import explore, run_research
from runtime.hosts.types import RoleConfig
from runtime.models import ScriptedModel
from runtime.seams import LoopOptions, MemorySeam

GOAL = "Size the market for agent memory."


@pytest.fixture(autouse=True)
def _no_model_override(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SPECWIRE_MODEL", raising=False)
    monkeypatch.delenv("SPECWIRE_SCRIPT", raising=False)


def shared_memory(asked: list[str]) -> LoopOptions:
    def recall(query: str, k: int) -> list[str]:
        asked.append(query)
        return ["self-hosting is growing"]

    return LoopOptions(memory=MemorySeam(auto_recall=True, recall=recall))


def test_research_runs_every_branch_in_its_own_session(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    asked: list[str] = []
    code = run_research(
        spec_name="market",
        model="scripted",
        instructions="You research markets.",
        goal=GOAL,
        branching_factor=3,
        max_duration_ms=600_000,
        allowed_origins=["https://example.org"],
        catalog=echo_catalog(),
        cwd=tmp_path,
        options=shared_memory(asked),
        argv=[],
    )
    out, err = capsys.readouterr()
    assert code == 0, err
    logs = session_logs(tmp_path / ".specwire" / "sessions")
    assert len(logs) == 3
    # every branch shares the wired options and recalls for the goal, then the instructions
    assert asked == ["Size the market for agent memory.", "You research markets."] * 3
    for events in logs.values():
        assert of_kind(events, "user_message") == [{"text": GOAL, "turn": 1}]
        assert of_kind(events, "session_end") == [{"stopReason": "complete", "turns": 1}]
    branches = sorted((of_kind(e, "session_start")[0]["branch"], sid) for sid, e in logs.items())
    assert [b for b, _ in branches] == [1, 2, 3]
    reply = f"Noted: {GOAL.rstrip('.')}. From memory: self-hosting is growing."
    assert out.splitlines() == [
        f"research goal: {GOAL}",
        *(f"[branch {b}/3] {sid}: {reply}" for b, sid in branches),
        "research: 3 of 3 branch(es) ran",
        "allowed origins: https://example.org (no network tool is available yet)",
    ]


def test_research_goal_can_be_overridden_on_the_command_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = run_research(
        spec_name="market",
        model="scripted",
        instructions="x",
        goal=GOAL,
        branching_factor=1,
        max_duration_ms=1000,
        allowed_origins=[],
        catalog=echo_catalog(),
        cwd=tmp_path,
        argv=["--goal", "Count the competitors."],
    )
    assert code == 0
    assert "Noted: Count the competitors." in capsys.readouterr().out


def test_no_branch_starts_after_the_deadline(tmp_path: Path) -> None:
    ticks = count()

    def clock() -> float:  # each reading is ten seconds after the previous one
        return next(ticks) * 10.0

    outcome = explore(
        model=ScriptedModel(),
        instructions="x",
        goal=GOAL,
        branching_factor=4,
        max_duration_ms=15_000,
        catalog=echo_catalog(),
        sessions_dir=tmp_path / "sessions",
        options=LoopOptions(),
        spec_name="market",
        clock=clock,
        log=lambda line: None,
    )
    # deadline = 0 + 15 s; branch 1 always starts, branch 2 starts at t=10, branch 3 sees t=20.
    assert [b.index for b in outcome.branches] == [1, 2]
    assert outcome.skipped == 2
    assert len(list((tmp_path / "sessions").glob("*.jsonl"))) == 2


def test_research_summary_reports_the_budget(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from runtime.hosts.research import BranchOutcome, ResearchOutcome, summary

    outcome = ResearchOutcome([BranchOutcome(1, "sess_0000000000000001", "done", "complete")], 2)
    lines = summary(GOAL, 3, 500, [], outcome)
    assert "research: the 500 ms budget ran out after 1 of 3 branch(es); 2 not started" in lines
    assert lines[-1] == "allowed origins: none (no network tool is available yet)"


ROLES = [
    RoleConfig("researcher", "You gather facts."),
    RoleConfig("writer", "You write the story.", model="scripted/writer"),
    RoleConfig("editor", "You edit.", model="mystery/gpt-4o"),
]


def crew(tmp_path: Path, *argv: str, asked: list[str] | None = None) -> int:
    return run_crew(
        spec_name="newsroom",
        model="scripted",
        entry="researcher",
        roles=ROLES,
        catalog=echo_catalog(),
        cwd=tmp_path,
        options=shared_memory(asked if asked is not None else []),
        argv=list(argv),
    )


def test_the_entry_role_handles_the_users_messages(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    asked: list[str] = []
    assert crew(tmp_path, "--message", 'call Echo {"text": "lead"}', asked=asked) == 0
    out, err = capsys.readouterr()
    assert out.splitlines() == ["Done: echo: lead"]
    assert "crew role researcher" in err and "other roles: writer, editor" in err
    [events] = session_logs(tmp_path / ".specwire" / "sessions").values()
    start = of_kind(events, "session_start")[0]
    assert (start["role"], start["target"], start["model"]) == ("researcher", "crew", "scripted")
    [context] = of_kind(events, "context")
    assert context["blocks"][0] == {"kind": "instructions", "text": "You gather facts."}
    assert asked == ['call Echo {"text": "lead"}', "You gather facts."]


def test_another_role_runs_with_its_instructions_and_model(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    asked: list[str] = []
    assert crew(tmp_path, "--role", "writer", "-m", "draft it", asked=asked) == 0
    assert capsys.readouterr().out.splitlines() == [
        "Noted: draft it. From memory: self-hosting is growing."
    ]
    [events] = session_logs(tmp_path / ".specwire" / "sessions").values()
    start = of_kind(events, "session_start")[0]
    assert (start["role"], start["model"]) == ("writer", "scripted/writer")
    assert asked == ["draft it", "You write the story."]


def test_unknown_role_and_unavailable_role_model_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert crew(tmp_path, "--role", "intern", "-m", "hi") == 2
    assert 'unknown role "intern" (roles: researcher, writer, editor)' in capsys.readouterr().err
    assert crew(tmp_path, "--role", "editor", "-m", "hi") == 2
    assert 'model "mystery/gpt-4o" is not available' in capsys.readouterr().err
    assert not (tmp_path / ".specwire").exists()
