"""The research and crew hosts: branches and roles sharing one catalog and one set of options."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hosts_support import echo_catalog, of_kind, session_logs

from specwire.runtime.core.seams import LoopOptions, MemorySeam
from specwire.runtime.hosts.crew import run_crew
from specwire.runtime.hosts.research import run_research
from specwire.runtime.hosts.research_run import parse_sub_goals
from specwire.runtime.hosts.types import RoleConfig, TurnSetup

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


def test_research_splits_the_goal_and_runs_every_branch_in_a_linked_session(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    asked: list[str] = []
    code = run_research(
        spec_name="market",
        model="scripted",
        instructions="You research markets.",
        goal="Count the vendors.\n\nPrice the hosted plans.",
        branching_factor=3,
        max_duration_ms=600_000,
        allowed_origins=[],
        build_session=lambda: TurnSetup(catalog=echo_catalog(), options=shared_memory(asked)),
        cwd=tmp_path,
        argv=[],
    )
    out, err = capsys.readouterr()
    assert code == 0, err
    logs = session_logs(tmp_path / ".specwire" / "sessions")
    starts = {sid: of_kind(events, "session_start")[0] for sid, events in logs.items()}
    [root] = [sid for sid, start in starts.items() if start.get("phase") == "plan"]
    branches = sorted((start["branch"], sid) for sid, start in starts.items() if "branch" in start)
    assert [b for b, _ in branches] == [1, 2, 3]
    for _, sid in branches:
        assert (starts[sid]["parent"], starts[sid]["runId"]) == (root, root)
    tasks = [of_kind(logs[sid], "user_message")[0]["text"] for _, sid in branches]
    assert tasks == [
        "Count the vendors.",
        "Price the hosted plans.",
        "Count the vendors. (angle 3 of 3)",
    ]
    [synthesis] = [sid for sid, start in starts.items() if start.get("phase") == "synthesis"]
    assert starts[synthesis]["runId"] == root
    # the planner runs without memory; branches and synthesis share the wired recall
    assert len(asked) == 2 * 4
    [report_line] = [line for line in out.splitlines() if line.startswith("report: ")]
    report = Path(report_line.removeprefix("report: "))
    assert report == tmp_path / "research-runs" / root / "report.md"
    text = report.read_text(encoding="utf-8")
    assert "- status: **complete**" in text
    for _, sid in branches:
        assert sid in text
    assert f"research: complete — 3 branch(es), run {root}" in out


def test_research_goal_can_be_overridden_on_the_command_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = run_research(
        spec_name="market",
        model="scripted",
        instructions="x",
        goal=GOAL,
        branching_factor=1,
        max_duration_ms=60_000,
        allowed_origins=[],
        build_session=lambda: TurnSetup(catalog=echo_catalog()),
        cwd=tmp_path,
        argv=["--goal", "Count the competitors.", "--out", "reports"],
    )
    out = capsys.readouterr().out
    assert code == 0
    assert "Noted: Count the competitors." in out
    assert list((tmp_path / "reports").glob("sess_*/report.md"))


def test_a_deadline_that_passes_gives_a_partial_report_and_status_3(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = run_research(
        spec_name="market",
        model="scripted",
        instructions="x",
        goal=GOAL,
        branching_factor=2,
        max_duration_ms=0,
        allowed_origins=[],
        build_session=lambda: TurnSetup(catalog=echo_catalog()),
        cwd=tmp_path,
        argv=[],
    )
    out = capsys.readouterr().out
    assert code == 3
    [report] = list((tmp_path / "research-runs").glob("sess_*/report.md"))
    text = report.read_text(encoding="utf-8")
    assert "- status: **partial** (unfinished: branch 1/2, branch 2/2; no synthesis)" in text
    assert "(not written: the deadline passed before the synthesis could start)" in text
    assert "research: partial" in out


def test_sub_goals_parse_from_json_fences_or_lines_and_are_padded() -> None:
    assert parse_sub_goals('```json\n["a", "b"]\n```', "G", 2) == ["a", "b"]
    assert parse_sub_goals("1. first\n2) second\n- third", "G", 2) == ["first", "second"]
    assert parse_sub_goals("", "Goal line\nmore", 2) == [
        "Goal line (angle 1 of 2)",
        "Goal line (angle 2 of 2)",
    ]


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
        build_session=lambda: TurnSetup(
            catalog=echo_catalog(), options=shared_memory(asked if asked is not None else [])
        ),
        cwd=tmp_path,
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


# -- delegation ---------------------------------------------------------------------------------

CHAIN_ROLES = [
    RoleConfig("chief", "You run the desk."),
    RoleConfig("writer", "You write."),
    RoleConfig("checker", "You check with tools."),
]


def delegate(role: str, task: str) -> str:
    return "call Delegate " + json.dumps({"role": role, "task": task})


def crew_chain(tmp_path: Path, *messages: str) -> int:
    argv = [arg for message in messages for arg in ("--message", message)]
    return run_crew(
        spec_name="newsroom",
        model="scripted",
        entry="chief",
        roles=CHAIN_ROLES,
        build_session=lambda: TurnSetup(catalog=echo_catalog(), options=LoopOptions()),
        cwd=tmp_path,
        argv=argv,
    )


def test_delegation_chains_down_and_the_answer_comes_back_up(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    inner = 'call Echo {"text": "checked"}'
    assert crew_chain(tmp_path, delegate("writer", delegate("checker", inner))) == 0
    logs = session_logs(tmp_path / ".specwire" / "sessions")
    starts = {sid: of_kind(events, "session_start")[0] for sid, events in logs.items()}
    by_role = {start["role"]: sid for sid, start in starts.items()}
    root, writer, checker = by_role["chief"], by_role["writer"], by_role["checker"]
    assert (starts[writer]["parent"], starts[writer]["runId"]) == (root, root)
    assert (starts[checker]["parent"], starts[checker]["runId"]) == (writer, root)
    assert starts[checker]["chain"] == ["chief", "writer", "checker"]
    assert of_kind(logs[root], "sub_agent_start")[0]["childSessionId"] == writer
    assert of_kind(logs[writer], "sub_agent_end") == [
        {"childSessionId": checker, "stopReason": "complete"}
    ]
    # The checker's answer is the writer's tool result, whose answer is the chief's.
    assert of_kind(logs[checker], "assistant_message")[0]["text"] == "Done: echo: checked"
    [writer_result] = of_kind(logs[writer], "tool_result")
    assert writer_result["text"] == f"answer from checker (session {checker}):\nDone: echo: checked"
    [root_result] = of_kind(logs[root], "tool_result")
    assert root_result["text"].startswith(f"answer from writer (session {writer}):\nDone: answer")
    assert capsys.readouterr().out == f"Done: answer from writer (session {writer}):\n"


def test_a_cycle_and_an_unknown_role_are_tool_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert crew_chain(tmp_path, delegate("writer", delegate("chief", "hello"))) == 0
    assert crew_chain(tmp_path, delegate("intern", "hello")) == 0
    assert crew_chain(tmp_path, delegate("chief", "hello")) == 0
    out = capsys.readouterr().out.splitlines()
    logs = session_logs(tmp_path / ".specwire" / "sessions")
    results = [r["text"] for events in logs.values() for r in of_kind(events, "tool_result")]
    assert any("delegation cycle refused: chief → writer → chief" in text for text in results), (
        results
    )
    assert out[1] == 'That failed: Delegate: unknown role "intern" (roles: chief, writer, checker)'
    assert out[2].startswith("That failed: Delegate: delegation cycle refused: chief → chief")
