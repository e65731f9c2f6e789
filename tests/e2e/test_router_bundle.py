"""End to end: a cli bundle whose memory reads three providers — the embedded fact store
(primary), a Markdown vault in the agent's folder, and a memory service nobody answers at.

Built by ``codegen build`` and run as a user runs it (scripted model). The turn is answered
with both live providers' results, the dead one is one ``memory_diagnostic`` event in the
session log (and one stderr line) for the turn, nothing is duplicated, and its token never
appears anywhere.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from serving_support import build_bundle, clean_env

FACT = "The staging cluster runs in eu-west-1."
NOTE = """---
title: Staging cluster
aliases: [stage]
tags: [infra]
---
The staging cluster is reset every Monday at 06:00 UTC. See [[Runbook]].
"""
TWIN_NOTE = f"{FACT}\n"  # the same content as the fact: one result, not two
TOKEN = "team-" + "t0ken" * 5


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


SPEC = """\
name: routed
target: cli
agent:
  model: scripted
  instructions: You answer questions about our infrastructure.
memory:
  providers:
    - name: main
      backend: file
    - name: notes
      backend: markdown
      path: notes
    - name: team
      backend: http
      url: http://127.0.0.1:{port}
      token: $TEAM_MEMORY_TOKEN
      deadline: 2s
"""


@pytest.fixture(scope="module")
def agent(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("spec")
    spec = root / "routed.yaml"
    spec.write_text(SPEC.format(port=closed_port()), encoding="utf-8")
    return build_bundle(spec, root / "out")


def run(agent: Path, workdir: Path, message: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(agent), "--message", message],
        cwd=workdir,
        capture_output=True,
        text=True,
        env=clean_env(SPECWIRE_MODEL="scripted", HOME=str(workdir), TEAM_MEMORY_TOKEN=TOKEN),
        check=False,
        stdin=subprocess.DEVNULL,
        timeout=120,
    )


def events(log: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]


def session_log(stderr: str) -> Path:
    [line] = [line for line in stderr.splitlines() if line.startswith("session log: ")]
    return Path(line.removeprefix("session log: "))


def test_a_turn_reads_the_store_and_the_vault_and_reports_the_dead_service_once(
    agent: Path, tmp_path: Path
) -> None:
    workdir = tmp_path / "work"
    (workdir / "notes" / "ops").mkdir(parents=True)
    (workdir / "notes" / "ops" / "staging.md").write_text(NOTE, encoding="utf-8")
    (workdir / "notes" / "twin.md").write_text(TWIN_NOTE, encoding="utf-8")

    first = run(agent, workdir, f"remember: {FACT}")
    assert first.returncode == 0, first.stderr
    assert not any((workdir / "notes").rglob("*.sqlite3"))  # writes go to the primary only

    second = run(agent, workdir, "recall: staging cluster")
    assert second.returncode == 0, second.stderr
    logged = events(session_log(second.stderr))

    [result] = [e["payload"] for e in logged if e["type"] == "tool_result"]
    assert result["name"] == "Recall" and not result["isError"]
    text = result["text"]
    assert FACT in text and "source mem_" in text  # the primary's fact
    assert "reset every Monday at 06:00 UTC" in text and "source ops/staging.md" in text
    assert text.count(FACT) == 1  # the vault's twin of the fact is merged into it
    assert "source twin.md" not in text

    [recall] = [e["payload"] for e in logged if e["type"] == "recall"]
    assert recall["count"] >= 2 and "error" not in recall
    assert len(recall["lines"]) == len(set(recall["lines"]))
    assert any("reset every Monday" in line for line in recall["lines"])

    diagnostics = [e["payload"] for e in logged if e["type"] == "memory_diagnostic"]
    assert diagnostics == [
        {
            "provider": "team",
            "backend": "http",
            "problem": "it is unreachable or failing",
            "turn": 1,
        }
    ]
    assert second.stderr.count("[memory] provider team (http) skipped") == 1
    for output in (first.stderr, second.stderr, first.stdout, second.stdout):
        assert TOKEN not in output
    for log in (workdir / ".specwire").rglob("*"):
        if log.is_file():
            assert TOKEN.encode() not in log.read_bytes()


def test_an_edited_note_is_recalled_by_the_next_run(agent: Path, tmp_path: Path) -> None:
    workdir = tmp_path / "work"
    (workdir / "notes").mkdir(parents=True)
    note = workdir / "notes" / "db.md"
    note.write_text("The database is PostgreSQL 16.\n", encoding="utf-8")
    assert "PostgreSQL 16" in run(agent, workdir, "recall: database").stdout
    note.write_text("The database is MySQL 8 since the migration.\n", encoding="utf-8")
    answer = run(agent, workdir, "recall: database").stdout
    assert "MySQL 8" in answer and "PostgreSQL 16" not in answer
