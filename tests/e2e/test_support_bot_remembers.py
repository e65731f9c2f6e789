"""End to end: build the cli example, run the bundle twice, and see it remember.

Run 1 tells the agent a fact and works on a plan (one step proven with a real tool call).
Run 2 is a fresh process: the fact is recalled into the prompt and the plan resumes from the
handoff, both visible in run 2's session log.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]


def codegen(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "specwire.emitters.command", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
    )


def run_bundle(agent: Path, workdir: Path, *messages: str) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, str(agent)]
    for message in messages:
        argv += ["--message", message]
    env = {**os.environ, "SPECWIRE_MODEL": "scripted", "HOME": str(workdir / "home")}
    env.pop("SPECWIRE_SCRIPT", None)
    return subprocess.run(
        argv,
        cwd=workdir,
        capture_output=True,
        text=True,
        env=env,
        check=False,
        stdin=subprocess.DEVNULL,
    )


def build_support_bot(tmp_path: Path) -> Path:
    out = tmp_path / "out"
    spec = ROOT / "examples" / "support-bot.yaml"
    built = codegen("build", str(spec), "--out", str(out), cwd=ROOT)
    assert built.returncode == 0, built.stderr
    [agent] = sorted(out.rglob("agent.py"))
    return agent


def session_events(workdir: Path) -> list[list[dict[str, Any]]]:
    """Every session's events, oldest session first (ordered by its session_start line)."""
    logs = sorted((workdir / ".specwire" / "sessions").glob("sess_*.jsonl"))
    sessions = [
        [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()] for log in logs
    ]
    return sorted(sessions, key=lambda events: events[0]["at"])


def test_support_bot_remembers_across_runs(tmp_path: Path) -> None:
    agent = build_support_bot(tmp_path)

    workdir = tmp_path / "work"
    (workdir / "home").mkdir(parents=True)
    (workdir / "ticket.txt").write_text(
        "Invoice export fails for EUR accounts.\n", encoding="utf-8"
    )

    first = run_bundle(
        agent,
        workdir,
        "remember: the customer's billing plan is Enterprise with EUR invoicing",
        "plan: Fix invoice export: reproduce the failure; patch the exporter; verify",
        'call read {"path": "ticket.txt"}',
        "prove 1",
    )
    assert first.returncode == 0, first.stderr

    [run1] = session_events(workdir)
    results = [e["payload"] for e in run1 if e["type"] == "tool_result"]
    assert [r["name"] for r in results] == ["Remember", "PlanUpdate", "read", "PlanComplete"]
    assert not any(r["isError"] for r in results), results
    proofs = [e["payload"] for e in run1 if e["type"] == "action_proof"]
    assert [p["verdict"] for p in proofs] == ["verified"]

    state = workdir / ".specwire" / "state" / "support-bot"
    handoff = (state / "handoff.md").read_text(encoding="utf-8")
    assert "Fix invoice export" in handoff
    assert "patch the exporter" in handoff

    second = run_bundle(agent, workdir, "what should we do next?")
    assert second.returncode == 0, second.stderr
    run1_again, run2 = session_events(workdir)
    assert run1_again == run1

    [recall] = [e["payload"] for e in run2 if e["type"] == "recall"]
    assert recall["count"] >= 1
    assert any("Enterprise" in line for line in recall["lines"])

    [context] = [e["payload"] for e in run2 if e["type"] == "context"]
    blocks = {block["kind"]: block["text"] for block in context["blocks"]}
    assert "Enterprise" in blocks["recalled_memory"]
    assert "patch the exporter" in blocks["handoff"]

    [reply] = [e["payload"]["text"] for e in run2 if e["type"] == "assistant_message"]
    assert "Enterprise" in reply
    assert "patch the exporter" in reply


def test_a_fact_unrelated_to_the_instructions_is_recalled_when_asked_about(
    tmp_path: Path,
) -> None:
    agent = build_support_bot(tmp_path)
    workdir = tmp_path / "work"
    (workdir / "home").mkdir(parents=True)

    told = run_bundle(agent, workdir, "remember: the office wifi password is hunter2")
    assert told.returncode == 0, told.stderr
    asked = run_bundle(agent, workdir, "what is the wifi password?")
    assert asked.returncode == 0, asked.stderr

    _, run2 = session_events(workdir)
    [recall] = [e["payload"] for e in run2 if e["type"] == "recall"]
    assert recall["lines"][:1] == ["the office wifi password is hunter2"]
    assert "From memory: the office wifi password is hunter2" in asked.stdout
