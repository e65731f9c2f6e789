"""docs/memory.md's "Try PostgreSQL on your machine" does what the page says: its console lines,
read from the page, run against a real PostgreSQL (pgserver) and answer as the prose promises.
(The page once asked a second session for a fact the first one kept: a console line names no
user, so the fact was that session's and the second line recalled nothing.)"""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "conformance"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from conformance_harness import PostgresServerForTests  # noqa: E402
from serving_support import ROOT, build_bundle, clean_env  # noqa: E402

pytestmark = [pytest.mark.e2e, pytest.mark.postgres]

PAGE = ROOT / "docs" / "memory.md"
AGENT_LINE = re.compile(r"^\.venv/bin/python build/managed-postgres/agent\.py (.+)$", re.M)


@pytest.fixture
def database() -> Iterator[str]:
    uri = PostgresServerForTests.fresh_database()
    yield uri
    PostgresServerForTests.drop_database(uri)


def section() -> str:
    text = PAGE.read_text(encoding="utf-8")
    start = text.index("### Try PostgreSQL on your machine")
    return text[start : text.index("\n### ", start + 1)]


def ask(agent: Path, work: Path, dsn: str, argv: list[str]) -> str:
    done = subprocess.run(
        [sys.executable, str(agent), *argv],
        cwd=work,
        capture_output=True,
        text=True,
        env=clean_env(HOME=str(work / "home"), DATABASE_URL=dsn),
        check=False,
        stdin=subprocess.DEVNULL,
        timeout=300,  # a start that hangs fails here; nothing is timed
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_the_pages_console_lines_answer_as_the_page_says(tmp_path: Path, database: str) -> None:
    text = section()
    assert "codegen build examples/managed-postgres.yaml --out build" in text
    lines = [shlex.split(line) for line in AGENT_LINE.findall(text)]
    assert len(lines) == 3
    agent = build_bundle(ROOT / "examples" / "managed-postgres.yaml", tmp_path / "build")
    work = tmp_path / "work"
    work.mkdir()
    remembered, recalled, other_tenant = (ask(agent, work, database, argv) for argv in lines)
    assert "remembered" in remembered
    # "The second line answers `From memory: the lobby code is 2468`"
    assert "From memory: the lobby code is 2468" in recalled
    assert "From memory: the lobby code is 2468" in text
    # "tenant-globex's recall finds nothing"
    assert "no memories matched" in other_tenant
    # "`tenant-acme/desk2` does not recall it either"
    assert "`tenant-acme/desk2` does not recall it" in text
    elsewhere = ask(agent, work, database, ["--message", "tenant-acme/desk2: lobby code?"])
    assert "lobby code is 2468" not in elsewhere
