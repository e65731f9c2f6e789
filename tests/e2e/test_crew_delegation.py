"""End to end: a built crew bundle whose roles delegate to each other.

The entry role delegates to the writer, which delegates to the checker; the checker runs a real
tool and proves the plan step the entry role created: the proof names the checker's
sub-session, and the answer comes back up the chain. A cycle and an unknown role are tool
errors; the checker's failing primary model falls back to the next in ``model_fallbacks``; a
later run cannot prove a step with a tool call of an earlier, unrelated run.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from serving_support import build_bundle

SPEC = """\
name: newsroom
target: crew
model: scripted
entry: chief
roles:
  chief:
    instructions: You run the desk and hand work to the others.
  writer:
    instructions: You write stories.
  checker:
    instructions: You check facts with tools.
    model: scripted/failing
    model_fallbacks: [scripted]
tools: [ls]
memory: {}
continuity: true
"""


def delegate(role: str, task: str) -> str:
    return "call Delegate " + json.dumps({"role": role, "task": task})


def run(agent: Path, work: Path, *messages: str) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, str(agent)]
    for message in messages:
        argv += ["--message", message]
    env = {k: v for k, v in os.environ.items() if not k.startswith("SPECWIRE_")}
    env["HOME"] = str(work.parent)
    return subprocess.run(
        argv, cwd=work, capture_output=True, text=True, env=env, check=False, timeout=120
    )


def logs(work: Path) -> dict[str, list[dict[str, Any]]]:
    found = {}
    for path in sorted((work / ".specwire" / "sessions").glob("sess_*.jsonl")):
        found[path.stem] = [json.loads(line) for line in path.read_text().splitlines()]
    return found


def start_of(events: list[dict[str, Any]]) -> dict[str, Any]:
    return next(e["payload"] for e in events if e["type"] == "session_start")


def plan_file(work: Path) -> str:
    [path] = (work / ".specwire" / "state" / "newsroom" / "plans").glob("plan-0001-*.md")
    return path.read_text(encoding="utf-8")


def test_roles_delegate_down_a_chain_and_a_sub_session_proves_the_step(tmp_path: Path) -> None:
    spec = tmp_path / "newsroom.yaml"
    spec.write_text(SPEC, encoding="utf-8")
    agent = build_bundle(spec, tmp_path / "out")
    work = tmp_path / "work"
    work.mkdir()
    (work / "notes.txt").write_text("draft\n", encoding="utf-8")
    check = "steps:\ncall ls {}\nprove 1"
    done = run(
        agent,
        work,
        "plan: Story: check the files; write it",
        delegate("writer", delegate("checker", check)),
        delegate("writer", delegate("chief", "hello")),
        delegate("intern", "hello"),
    )
    assert done.returncode == 0, done.stderr
    # The checker's primary model fails on purpose; its fallback answers.
    assert "[model] scripted/failing failed" in done.stderr
    assert "falling back to scripted" in done.stderr
    found = logs(work)
    by_role = {start_of(events)["role"]: sid for sid, events in found.items()}
    assert set(by_role) == {"chief", "writer", "checker"}
    root, checker = by_role["chief"], by_role["checker"]
    assert start_of(found[checker])["runId"] == root
    # The proof names the sub-session where the tool ran.
    plan = plan_file(work)
    assert "1. [proven] check the files" in plan
    assert f'"sessionId": "{checker}"' in plan and '"toolName": "ls"' in plan
    lines = done.stdout.splitlines()
    assert lines[1].startswith("Done: answer from writer (session sess_")
    results = [
        e["payload"]["text"]
        for events in found.values()
        for e in events
        if e["type"] == "tool_result"
    ]
    assert any("delegation cycle refused: chief → writer → chief" in r for r in results)
    assert lines[3] == (
        'That failed: Delegate: unknown role "intern" (roles: chief, writer, checker)'
    )

    # A later run (a new root session) cannot prove a step with the first run's tool call.
    [use] = [
        e["payload"]
        for e in found[checker]
        if e["type"] == "tool_use" and e["payload"]["name"] == "ls"
    ]
    cite = json.dumps({"step": 2, "evidence": [{"toolUseId": use["id"], "sessionId": checker}]})
    later = run(agent, work, f"call PlanComplete {cite}")
    assert later.returncode == 0, later.stderr
    assert "not part of this run" in later.stdout
    assert "2. [open] write it" in plan_file(work)
