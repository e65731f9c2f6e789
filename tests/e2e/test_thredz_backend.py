"""End to end: ``backend: thredz`` on a cli bundle. Our own memory server (``codegen memory mcp
--allow-writes`` over another agent's memory) stands in for Thredz: the bundle remembers and
recalls through it, and nothing lands in its local store. With the server down, the turn still
answers from the local stores and the one degraded line is logged."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path

from serving_support import build_bundle, clean_env, memory_server_entry, messages, run_bundle

DEGRADED = (
    "[thredz] unavailable — memory degraded to the local backend for this run (local stores "
    "under .specwire/ stay authoritative; nothing was lost)"
)
STORE_SPEC = """\
name: store
target: cli
agent: {model: scripted, instructions: You keep the team's memory.}
memory:
  wiki: {}
continuity: {}
"""
CLIENT_HEAD = """\
name: client
target: cli
agent: {model: scripted, instructions: You help the team.}
memory:
  backend: thredz
continuity: {}
thredz: true
mcp_servers:
  thredz:
"""


def run(agent: Path, workdir: Path, *texts: str) -> subprocess.CompletedProcess[str]:
    return run_bundle(agent, workdir, *messages(*texts))


def facts(root: Path, spec: str) -> list[str]:
    listed = subprocess.run(
        [sys.executable, "-m", "specwire.runtime.owner", "--root", str(root), "--spec", spec]
        + ["--json", "list"],
        capture_output=True,
        text=True,
        env=clean_env(),
        check=False,
        timeout=120,
    )
    assert listed.returncode == 0, listed.stderr
    return sorted(fact["text"] for fact in json.loads(listed.stdout) if fact["status"] == "live")


def client(tmp_path: Path, server: str) -> tuple[Path, Path]:
    spec = tmp_path / "client.yaml"
    spec.write_text(CLIENT_HEAD + server, encoding="utf-8")
    agent = build_bundle(spec, tmp_path / "client-out")
    workdir = tmp_path / "client-work"
    (workdir / "home").mkdir(parents=True)
    return agent, workdir


def test_a_thredz_bundle_remembers_and_recalls_through_the_server(tmp_path: Path) -> None:
    store_spec = tmp_path / "store.yaml"
    store_spec.write_text(STORE_SPEC, encoding="utf-8")
    store_agent = build_bundle(store_spec, tmp_path / "store-out")
    store_root = tmp_path / "store-work"
    (store_root / "home").mkdir(parents=True)
    seeded = run(store_agent, store_root, "remember: the store opens at nine")
    assert seeded.returncode == 0, seeded.stderr

    server = memory_server_entry(store_agent, store_root)
    agent, workdir = client(tmp_path, server)

    answered = run(agent, workdir, "remember: deploys go out on fridays", "recall: deploys")
    assert answered.returncode == 0, answered.stderr
    assert "[thredz]" not in answered.stderr
    assert "Done: mcp__thredz__Remember answered" in answered.stdout
    # The recall came back from the server, framed as a tool server's untrusted output.
    recall = next(line for line in answered.stdout.splitlines() if "Recall" in line)
    assert "mcp__thredz__Recall answered" in recall and "<mcp_tool_output>" in recall
    assert "deploys go out on fridays" in recall

    assert facts(store_root, "store") == ["deploys go out on fridays", "the store opens at nine"]
    # Nothing was remembered locally: the bundle's own fact store was never even created.
    assert not (workdir / ".specwire" / "facts" / "client.sqlite3").exists()


def test_with_the_server_down_the_turn_answers_locally_and_says_so_once(tmp_path: Path) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # closed again: nothing listens there
    server = f"    transport: http\n    url: http://127.0.0.1:{port}/mcp\n"
    agent, workdir = client(tmp_path, server)

    answered = run(agent, workdir, "remember: deploys go out on fridays", "recall: deploys")
    assert answered.returncode == 0, answered.stderr
    degraded = [line for line in answered.stderr.splitlines() if line.startswith("[thredz]")]
    assert len(degraded) == 1 and degraded[0].startswith(DEGRADED), answered.stderr
    assert "Done: remembered (mem_" in answered.stdout
    assert "deploys go out on fridays" in answered.stdout.splitlines()[-1]
    assert facts(workdir, "client") == ["deploys go out on fridays"]
