"""End to end: on the channel host a step is proven in a later message than its action.

The channel host runs one single-turn loop per message, seeded from the conversation's session
log; the tool call made in message 2 must reach the model in message 3 so ``prove 1`` can cite it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
MESSAGES = ("t1: plan: P: a; b", "t1: call ls {}", "t1: prove 1")


def build_helpdesk_with_ls(tmp_path: Path) -> Path:
    source = (ROOT / "examples" / "channel-helpdesk.yaml").read_text(encoding="utf-8")
    assert "\ntools:" not in source
    spec = tmp_path / "channel-helpdesk.yaml"
    spec.write_text(source.rstrip("\n") + "\ntools: [ls]\n", encoding="utf-8")
    out = tmp_path / "out"
    built = subprocess.run(
        [sys.executable, "-m", "specwire.emitters.command", "build", str(spec), "--out", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert built.returncode == 0, built.stderr
    [agent] = sorted(out.rglob("agent.py"))
    return agent


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


def read_log(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def only(events: list[dict[str, Any]], test: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
    [found] = [event for event in events if test(event)]
    return found


def turn_of(events: list[dict[str, Any]], event: dict[str, Any]) -> int:
    """The turn of the last user message logged before ``event``."""
    turns = [
        e["payload"]["turn"]
        for e in events
        if e["type"] == "user_message" and e["seq"] < event["seq"]
    ]
    return int(turns[-1])


def test_a_step_is_proven_in_a_later_message_than_its_action(tmp_path: Path) -> None:
    agent = build_helpdesk_with_ls(tmp_path)
    workdir = tmp_path / "work"
    (workdir / "home").mkdir(parents=True)

    ran = run_bundle(agent, workdir, *MESSAGES)
    assert ran.returncode == 0, ran.stderr
    assert "no successful tool call to cite" not in ran.stdout
    assert "step 1 → proven" in ran.stdout, ran.stdout

    logs = sorted((workdir / ".specwire" / "sessions").glob("sess_*.jsonl"))
    conversation = [
        events for events in map(read_log, logs) if events[0]["payload"].get("conversation") == "t1"
    ]
    [events] = conversation
    # Three messages, three single-turn runs, one conversation log.
    assert [e["payload"]["turn"] for e in events if e["type"] == "user_message"] == [1, 2, 3]

    ls_use = only(events, lambda e: e["type"] == "tool_use" and e["payload"]["name"] == "ls")
    proof = only(events, lambda e: e["type"] == "action_proof")
    assert (proof["payload"]["step"], proof["payload"]["verdict"]) == (1, "verified")
    assert proof["payload"]["toolUseId"] == ls_use["payload"]["id"]
    # The action in message 2, its proof in message 3.
    assert (turn_of(events, ls_use), turn_of(events, proof)) == (2, 3)

    [plan] = sorted((workdir / ".specwire" / "state").rglob("plan-0001-*.md"))
    lines = plan.read_text(encoding="utf-8").splitlines()
    assert "1. [proven] a" in lines
    assert "2. [open] b" in lines
