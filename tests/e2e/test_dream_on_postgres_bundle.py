"""End to end: a cli bundle with ``memory.backend: postgres`` (state follows the facts there)
dreams with ``agent.py --dream`` from an empty working folder: the fact steps consolidate the
spec's facts in PostgreSQL, the model phase's session is logged in the database, the run's
record is the database's (``codegen dream --backend postgres status`` reads it), and the folder
gets no file: no ``facts/<spec>.sqlite3``, no dream state, no session log, no evidence key."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from serving_support import build_bundle, clean_env

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "conformance"))
from conformance_harness import PostgresServerForTests  # noqa: E402

from specwire.runtime.facts.providers.admin import FactListing  # noqa: E402
from specwire.runtime.facts.providers.connect import DEFAULT_TENANT  # noqa: E402
from specwire.runtime.facts.providers.protocol import RetainRequest  # noqa: E402

pytestmark = [pytest.mark.e2e, pytest.mark.postgres]

SPEC_NAME = "pg-dreamer"
CODEGEN = str(Path(sys.executable).with_name("codegen"))
SPEC_TEXT = """\
name: pg-dreamer
target: cli
agent:
  model: scripted
  instructions: You keep notes.
memory:
  backend: postgres
  dsn: $DATABASE_URL
  dream:
    every: 1h
    mode: full
    budget_usd: 5
    instructions: |
      steps:
      remember: deploys go out on fridays
    prices:
      scripted: {input: 3, output: 15, cached_input: 0.3}
continuity: {}
"""


@pytest.fixture
def database() -> Iterator[str]:
    uri = PostgresServerForTests.fresh_database()
    yield uri
    PostgresServerForTests.drop_database(uri)


def run(argv: list[str], workdir: Path, database: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        argv,
        cwd=workdir,
        capture_output=True,
        text=True,
        env=clean_env(HOME=str(workdir / "home"), DATABASE_URL=database),
        check=False,
        stdin=subprocess.DEVNULL,
        timeout=300,
    )


def files_under(folder: Path) -> list[str]:
    return sorted(
        str(p.relative_to(folder))
        for p in folder.rglob("*")
        if p.is_file() and "home" not in p.relative_to(folder).parts[:1]
    )


def test_a_bundle_dreams_on_its_postgres_facts_and_writes_no_file(
    tmp_path: Path, database: str
) -> None:
    from specwire.runtime.facts.providers.postgres.provider import FactScope, PostgresFactProvider
    from specwire.runtime.pg.pool import open_pool
    from specwire.runtime.sessions.postgres import PostgresSessionLogs

    seeded = PostgresFactProvider(database, scope=FactScope(DEFAULT_TENANT, SPEC_NAME))
    for text in ("the port is 8080", "The port is 8080", "the port is 8081"):
        seeded.retain(RetainRequest(text))
    seeded.close()
    spec = tmp_path / "pg-dreamer.yaml"
    spec.write_text(SPEC_TEXT, encoding="utf-8")
    agent = build_bundle(spec, tmp_path / "out")
    workdir = tmp_path / "work"
    (workdir / "home").mkdir(parents=True)

    dreamt = run([sys.executable, str(agent), "--dream"], workdir, database)
    assert dreamt.returncode == 0, dreamt.stderr
    assert f"dream {SPEC_NAME}: ok" in dreamt.stdout, dreamt.stdout + dreamt.stderr
    assert "model phase: ran" in dreamt.stdout

    check = PostgresFactProvider(database, scope=FactScope(DEFAULT_TENANT, SPEC_NAME))
    try:
        live = sorted(s.fact.text for s in check.list_facts(FactListing()))
    finally:
        check.close()
    # The duplicate folded into its survivor (in the database, not a local file), and the
    # model phase's Remember landed there too.
    assert live == ["deploys go out on fridays", "the port is 8080", "the port is 8081"]

    pool = open_pool(database)
    try:
        logs = PostgresSessionLogs(pool, tenant=DEFAULT_TENANT, spec=SPEC_NAME)
        [session] = logs.sessions()
        events = list(logs.events(session))
    finally:
        pool.close()
    start = next(e for e in events if e.type == "session_start")
    assert start.payload["target"] == "dream"
    assert {e.payload["name"] for e in events if e.type == "tool_use"} == {"Remember"}

    assert files_under(workdir) == []
    status = run(
        [CODEGEN, "dream", "--backend", "postgres", "--spec", SPEC_NAME, "status"],
        workdir,
        database,
    )
    assert status.returncode == 0, status.stderr
    assert f"dream {SPEC_NAME}: last run" in status.stdout and "— ok" in status.stdout
    # What the model phase spent is in the agent's usage ledger (the database's row), as the
    # dream's kind: a managed host's scheduled dream records it the same way.
    model = json.loads(
        run(
            [CODEGEN, "dream", "--backend", "postgres", "--spec", SPEC_NAME, "--json", "status"],
            workdir,
            database,
        ).stdout
    )["lastOutcome"]["model"]
    usage = run(
        [CODEGEN, "memory", "--backend", "postgres", "--spec", SPEC_NAME, "--json", "usage"],
        workdir,
        database,
    )
    assert usage.returncode == 0, usage.stderr
    [ledger] = json.loads(usage.stdout)
    assert ledger["turns"]["turns"] == 0
    assert ledger["dream"]["runs"] == 1 and ledger["dream"]["calls"] == model["calls"] >= 1
    assert ledger["dream"]["input"] == model["input_tokens"]
    assert ledger["dream"]["costUsd"] == model["spent_usd"]
    again = run([sys.executable, str(agent), "--dream"], workdir, database)
    assert again.returncode == 0 and "already ran in this window" in again.stdout
    assert files_under(workdir) == []
