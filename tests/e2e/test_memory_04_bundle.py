"""End to end: the CrewHaus 0.4 memory example (``examples/support-memory-04.yaml``) builds, and
its channel bundle, on the local console, recalls an earlier conversation's outcome (session
recall) and runs its dream after a turn (refusing the unpriced model phase, with the reason)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from serving_support import ROOT, build_bundle, clean_env

SPEC = "support-memory-04"
PORTAL = "the invoice portal moved to portal.acme.example last week"


def console(agent: Path, workdir: Path, *lines: str) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, str(agent), "console"]
    for line in lines:
        argv += ["--message", line]
    return subprocess.run(
        argv,
        cwd=workdir,
        capture_output=True,
        text=True,
        env=clean_env(SPECWIRE_MODEL="scripted", HOME=str(workdir / "home")),
        check=False,
        stdin=subprocess.DEVNULL,
        timeout=300,
    )


def recall_events(workdir: Path) -> list[dict[str, Any]]:
    found = []
    for log in sorted((workdir / ".specwire" / "sessions").glob("sess_*.jsonl")):
        for line in log.read_text(encoding="utf-8").splitlines():
            event = json.loads(line)
            if event["type"] == "recall":
                found.append(event["payload"])
    return found


def test_the_04_bundle_recalls_an_earlier_conversation_and_dreams(tmp_path: Path) -> None:
    agent = build_bundle(ROOT / "examples" / f"{SPEC}.yaml", tmp_path / "out")
    workdir = tmp_path / "work"
    (workdir / "home").mkdir(parents=True)
    first = console(agent, workdir, f"t1: {PORTAL}")
    assert first.returncode == 0, first.stderr
    # The dream ran after the turn, in the background, and the console waited for it.
    assert f"[dream] {SPEC}: ok (model phase: refused: the model scripted has no price" in (
        first.stderr
    )
    state = workdir / ".specwire" / "state" / SPEC / "dream" / "state.json"
    assert json.loads(state.read_text(encoding="utf-8"))["lastOutcome"]["mode"] == "full"

    second = console(agent, workdir, "t2: ask about invoice portal: where is the invoice portal?")
    assert second.returncode == 0, second.stderr
    assert "t2: Known: [session:sess_" in second.stdout and "portal.acme.example" in second.stdout
    [*_, last] = recall_events(workdir)
    assert any(line.startswith("[session:sess_") for line in last["lines"])
    # The second process, in the same window, did not dream again (the state file says so).
    assert f"[dream] {SPEC}: already ran in this window" in second.stderr
    assert "(model phase:" not in second.stderr
