"""End to end over OpenComputer's HTTP memory contract: ``specwire-memory-server --opencomputer``
in its own process, a cli bundle built by ``codegen build`` with ``memory.protocol:
opencomputer`` and the server's tools, run as its users run it (the scripted model).

A fact written through ``memory_remember`` in one folder is recalled before the next run's turn
in another folder; an endpoint that cannot be reached blocks the turn in one line.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from serving_support import ROOT, MemoryServer, build_bundle, clean_env, free_port

SPEC_NAME = "oc-notes"
STAGING = "the staging cluster runs in eu-west-1"
SERVER = [sys.executable, "-m", "specwire.runtime.hosts.http.memory_server"]


def server_tools() -> list[dict[str, Any]]:
    printed = subprocess.run(
        [*SERVER, "--opencomputer-tools"], capture_output=True, text=True, check=True, cwd=ROOT
    )
    tools: list[dict[str, Any]] = json.loads(printed.stdout)
    return tools


def partition_for(namespace: str) -> str:
    printed = subprocess.run(
        [*SERVER, "--partition-for", "single.tenant", SPEC_NAME, namespace],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    )
    return printed.stdout.strip()


class OpenComputerServer(MemoryServer):
    """The memory server in its OpenComputer mode, one partition bound to the agent."""

    def __init__(self, root: Path) -> None:
        root.mkdir(parents=True, exist_ok=True)
        table = root / "partitions.json"
        binding = {"tenant": "platform", "spec": SPEC_NAME, "access": "read-write"}
        table.write_text(json.dumps({"partitions": {partition_for("agent"): binding}}))
        super().__init__(root, "platform", ("--opencomputer", str(table)))
        self.url = f"{self.url}/memory"


@pytest.fixture(scope="module")
def agent(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("spec")
    spec = folder / f"{SPEC_NAME}.yaml"
    spec.write_text(
        f"name: {SPEC_NAME}\ntarget: cli\n"
        "agent: {model: scripted, instructions: You keep notes for the platform team.}\n"
        "memory:\n  backend: http\n  protocol: opencomputer\n"
        "  url: $MEMORY_URL\n  token: $MEMORY_TOKEN\n"
        f"  tools: {json.dumps(server_tools())}\n",
        encoding="utf-8",
    )
    return build_bundle(spec, tmp_path_factory.mktemp("bundle"))


@pytest.fixture
def server(tmp_path: Path) -> Iterator[OpenComputerServer]:
    made = OpenComputerServer(tmp_path / "served")
    try:
        yield made
    finally:
        made.stop()


def run(agent: Path, workdir: Path, env: dict[str, str], message: str) -> Any:
    workdir.mkdir(parents=True, exist_ok=True)
    return subprocess.run(
        [sys.executable, str(agent), "--message", message],
        cwd=workdir,
        capture_output=True,
        text=True,
        env={**env, "HOME": str(workdir)},
        check=False,
        stdin=subprocess.DEVNULL,
        timeout=120,
    )


def tool_results(workdir: Path, name: str) -> list[str]:
    found = []
    for log in sorted((workdir / ".specwire" / "sessions").glob("sess_*.jsonl")):
        for line in log.read_text(encoding="utf-8").splitlines():
            event = json.loads(line)
            if event["type"] == "tool_result" and event["payload"]["name"] == name:
                found.append(str(event["payload"]["text"]))
    return found


def test_a_fact_written_through_the_endpoints_tool_is_recalled_in_another_folder(
    tmp_path: Path, agent: Path, server: OpenComputerServer
) -> None:
    env = clean_env(MEMORY_URL=server.url, MEMORY_TOKEN=server.token)
    # The reserved `memory` argument is the host's: dropped before the call.
    call = json.dumps({"text": STAGING, "memory": "knowledge"})
    first = run(agent, tmp_path / "laptop", env, f"call memory_remember {call}")
    assert first.returncode == 0, first.stderr
    assert "[memory] facts live in an OpenComputer memory endpoint at http://127.0.0.1" in (
        first.stderr
    )
    [stored] = tool_results(tmp_path / "laptop", "memory_remember")
    assert json.loads(stored)["status"] == "stored"

    second = run(agent, tmp_path / "ci-runner", env, "where does the staging cluster run?")
    assert second.returncode == 0, second.stderr
    assert STAGING in second.stdout  # "From memory: ..." from the recalled block
    for folder in ("laptop", "ci-runner"):
        assert not (tmp_path / folder / ".specwire" / "facts").exists()
    assert server.token not in first.stderr + second.stderr


def test_an_unreachable_endpoint_stops_the_start_in_one_line(tmp_path: Path, agent: Path) -> None:
    token = "t" * 24
    env = clean_env(MEMORY_URL=f"http://127.0.0.1:{free_port()}/memory", MEMORY_TOKEN=token)
    result = run(agent, tmp_path / "work", env, "what do you know about staging?")
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert result.stdout == ""  # never an answer made up with empty memory
    [line] = [ln for ln in result.stderr.splitlines() if ln.startswith(f"{SPEC_NAME}:")]
    assert line.startswith(f"{SPEC_NAME}: memory (http, opencomputer) is not reachable")
    assert not (tmp_path / "work").exists() or not any((tmp_path / "work").iterdir())
    assert token not in result.stderr
