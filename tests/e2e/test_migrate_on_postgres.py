"""`codegen memory migrate` through a real PostgreSQL (pgserver), end to end: the `codegen`
console script in a subprocess, the DSN read from `$DATABASE_URL` as a bundle reads it.

10,000 facts with forgotten, superseded, consolidated, keyed, expiring and expired history and
held writes go file → PostgreSQL → file (a folder where the agent never ran): the sorted
`codegen memory export` bytes and the held writes are the same on all three; a second run
copies 0. A run killed mid-way leaves whole batches, and the next run finishes the copy."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "conformance"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "runtime" / "owner"))
from conformance_harness import PostgresServerForTests  # noqa: E402
from memory_seed import SPEC, seed_store  # noqa: E402

CODEGEN = str(Path(sys.executable).with_name("codegen"))
FACTS = 10_000


@pytest.fixture
def database() -> Iterator[str]:
    uri = PostgresServerForTests.fresh_database()
    yield uri
    PostgresServerForTests.drop_database(uri)


def _env(dsn: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SPECWIRE_")}
    env["DATABASE_URL"] = dsn
    return env


def memory(root: Path, dsn: str, *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [CODEGEN, "memory", "--root", str(root), "--spec", SPEC, *argv],
        capture_output=True,
        text=True,
        env=_env(dsn),
        timeout=600,
    )


def sorted_export(root: Path, dsn: str, *backend: str) -> list[str]:
    done = memory(root, dsn, *backend, "export")
    assert done.returncode == 0, done.stderr
    return sorted(done.stdout.splitlines())


def held(root: Path, dsn: str, *backend: str) -> list[dict[str, object]]:
    done = memory(root, dsn, *backend, "--json", "list", "--quarantined")
    assert done.returncode == 0, done.stderr
    return sorted(json.loads(done.stdout), key=lambda record: str(record["id"]))


def migrate(root: Path, dsn: str, *argv: str) -> dict[str, object]:
    done = memory(root, dsn, "--json", "migrate", *argv, "--yes")
    assert done.returncode == 0, done.stderr
    outcome: dict[str, object] = json.loads(done.stdout)
    assert outcome["verified"] is True and outcome["source"] == outcome["target"]
    return outcome


def test_ten_thousand_facts_go_file_to_postgres_to_file_unchanged(
    tmp_path: Path, database: str
) -> None:
    home, back = tmp_path / "home", tmp_path / "back"
    seed_store(home, FACTS)
    original = sorted_export(home, database)
    original_held = held(home, database)
    assert len(original) > FACTS and len(original_held) > 40
    statuses = {json.loads(line)["status"] for line in original}
    assert statuses == {"live", "superseded", "forgotten", "expired"}

    there = migrate(home, database, "--from", "file", "--to", "postgres")
    assert there["copied"] == {"facts": len(original), "held": len(original_held)}
    assert sorted_export(home, database, "--backend", "postgres") == original
    assert held(home, database, "--backend", "postgres") == original_held

    assert not back.exists()
    returned = migrate(back, database, "--from", "postgres", "--to", "file")
    assert returned["copied"] == {"facts": len(original), "held": len(original_held)}
    assert sorted_export(back, database) == original
    assert held(back, database) == original_held

    for root, direction in ((home, ("file", "postgres")), (back, ("postgres", "file"))):
        again = memory(root, database, "migrate", "--from", direction[0], "--to", direction[1])
        assert again.returncode == 0, again.stderr
        assert again.stdout.startswith("copied 0 fact(s) and 0 held write(s)"), again.stdout


def test_a_migration_killed_mid_way_finishes_on_the_next_run(tmp_path: Path, database: str) -> None:
    import psycopg

    seed_store(tmp_path, 3_000)
    total = len(sorted_export(tmp_path, database))
    argv = ["--root", str(tmp_path), "--spec", SPEC, "migrate", "--from", "file"]
    running = subprocess.Popen(
        [CODEGEN, "memory", *argv, "--to", "postgres", "--batch", "50", "--yes"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=_env(database),
    )
    copied = 0
    with psycopg.connect(database, autocommit=True) as conn:
        deadline = time.monotonic() + 300
        while copied == 0 and running.poll() is None and time.monotonic() < deadline:
            time.sleep(0.005)
            try:
                row = conn.execute("SELECT count(*) FROM facts").fetchone()
            except psycopg.errors.UndefinedTable:
                continue  # the first connection migrates the schema
            copied = 0 if row is None else int(row[0])
        running.send_signal(signal.SIGKILL)
        assert running.wait(timeout=60) == -signal.SIGKILL, "the copy ended before it was killed"
        row = conn.execute("SELECT count(*) FROM facts").fetchone()
        left = 0 if row is None else int(row[0])
    assert 0 < left < total and left % 50 == 0  # whole batches only

    finished = migrate(tmp_path, database, "--from", "file", "--to", "postgres")
    assert finished["alreadyThere"] == {"facts": left, "held": 0}
    assert finished["copied"] == {"facts": total - left, "held": len(held(tmp_path, database))}
    pg = sorted_export(tmp_path, database, "--backend", "postgres")
    assert pg == sorted_export(tmp_path, database)
