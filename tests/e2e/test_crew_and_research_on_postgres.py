"""End to end: a crew and a research bundle with ``memory.backend: postgres`` (state follows the
facts there) run from empty working folders. Every session they open, the one the user talks to
and each role delegated to, each research branch and the synthesis, logs in the database with
its seals; the proof ladder proves a plan step with a tool call a delegated session made (read
back from the database); the research report reads its facts from the logs there and its proven
steps from the plan in the state volume; and no file is written under the folder (no session
log, no ``.evidence.key``, no state) but the research report itself."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from serving_support import build_bundle

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "conformance"))
from conformance_harness import PostgresServerForTests  # noqa: E402

from specwire.runtime.facts.providers.connect import DEFAULT_TENANT  # noqa: E402

pytestmark = [pytest.mark.e2e, pytest.mark.postgres]

CREW = """\
name: pg-newsroom
target: crew
model: scripted
entry: chief
roles:
  chief:
    instructions: You run the desk and hand work to the others.
  checker:
    instructions: You check facts with tools.
tools: [ls]
memory:
  backend: postgres
  dsn: $DATABASE_URL
continuity: true
"""

FACT = "the self-hosted agent memory market is 3B USD"


@pytest.fixture
def database() -> Iterator[str]:
    uri = PostgresServerForTests.fresh_database()
    yield uri
    PostgresServerForTests.drop_database(uri)


def run(argv: list[str], work: Path, database: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SPECWIRE_")}
    env["HOME"] = str(work.parent)
    env["DATABASE_URL"] = database
    return subprocess.run(
        argv,
        cwd=work,
        capture_output=True,
        text=True,
        env=env,
        check=False,
        stdin=subprocess.DEVNULL,
        timeout=180,
    )


def files_under(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file())


def database_logs(database: str, spec: str) -> dict[str, list[Any]]:
    """Every session log of ``spec`` in the database, its events verified against the seals."""
    from specwire.runtime.pg.pool import open_pool
    from specwire.runtime.sessions.postgres import PostgresSessionLogs

    pool = open_pool(database)
    try:
        logs = PostgresSessionLogs(pool, tenant=DEFAULT_TENANT, spec=spec)
        return {sid: list(logs.events(sid)) for sid in logs.sessions()}
    finally:
        pool.close()


def state_texts(database: str, spec: str, work: Path) -> dict[str, str]:
    from specwire.runtime.core.paths import StoreLayout
    from specwire.runtime.pg.pool import open_pool
    from specwire.runtime.pg.volume import PostgresVolume

    pool = open_pool(database)
    try:
        layout = StoreLayout.for_cwd(work, spec)
        volume = PostgresVolume(pool, layout.root, tenant=DEFAULT_TENANT, spec=spec)
        return {key: text for key, text, _ in volume.texts(volume.root)}
    finally:
        pool.close()


def start_of(events: list[Any]) -> dict[str, Any]:
    return dict(next(e.payload for e in events if e.type == "session_start"))


def delegate(role: str, task: str) -> str:
    return "call Delegate " + json.dumps({"role": role, "task": task})


def test_a_crews_delegated_sessions_log_in_the_database_and_prove_there(
    tmp_path: Path, database: str
) -> None:
    spec = tmp_path / "pg-newsroom.yaml"
    spec.write_text(CREW, encoding="utf-8")
    agent = build_bundle(spec, tmp_path / "out")
    work = tmp_path / "work"
    work.mkdir()
    done = run(
        [
            sys.executable,
            str(agent),
            "--message",
            "plan: Story: check the files",
            "--message",
            delegate("checker", "steps:\ncall ls {}\nprove 1"),
        ],
        work,
        database,
    )
    assert done.returncode == 0, done.stderr
    found = database_logs(database, "pg-newsroom")
    by_role = {start_of(events)["role"]: sid for sid, events in found.items()}
    assert set(by_role) == {"chief", "checker"}, found.keys()
    chief, checker = by_role["chief"], by_role["checker"]
    assert start_of(found[checker])["runId"] == chief
    assert [e.seq for e in found[checker]] == list(range(1, len(found[checker]) + 1))
    # The proof cites the delegated session's tool call, read back from the database.
    documents = state_texts(database, "pg-newsroom", work)
    [plan] = [text for key, text in documents.items() if "/plans/plan-0001-" in key]
    assert "1. [proven] check the files" in plan
    assert f'"sessionId": "{checker}"' in plan and '"toolName": "ls"' in plan
    assert files_under(work) == []


def research_spec(parts: list[str]) -> str:
    goal = "\n\n".join(parts)
    indented = "\n".join(f"  {line}" if line else "" for line in goal.splitlines())
    return (
        "name: pg-market\ntarget: research\n"
        "agent:\n  model: scripted\n  instructions: You research markets.\n"
        f"goal: |\n{indented}\n"
        f"branchingFactor: {len(parts)}\nmaxDurationMs: 60000\n"
        "tools: [ls]\n"
        "memory:\n  backend: postgres\n  dsn: $DATABASE_URL\n  recallK: 5\ncontinuity: true\n"
    )


def test_research_branches_log_in_the_database_and_the_report_reads_them_there(
    tmp_path: Path, database: str
) -> None:
    spec = tmp_path / "pg-market.yaml"
    spec.write_text(
        research_spec(
            [
                "steps:\nplan: Sources: list the notes\ncall ls {}\nprove 1",
                f"steps:\nremember: {FACT}",
            ]
        ),
        encoding="utf-8",
    )
    agent = build_bundle(spec, tmp_path / "out")
    work = tmp_path / "work"
    work.mkdir()
    done = run([sys.executable, str(agent)], work, database)
    assert done.returncode == 0, done.stderr
    assert "session logs: in the database" in done.stderr
    found = database_logs(database, "pg-market")
    branches = [sid for sid, events in found.items() if "branch" in start_of(events)]
    assert len(branches) == 2
    [line] = [ln for ln in done.stdout.splitlines() if ln.startswith("report: ")]
    report_path = Path(line.removeprefix("report: "))
    report = report_path.read_text(encoding="utf-8")
    for sid in branches:
        assert f"session `{sid}`" in report
    assert FACT in report  # from the branch's Remember, read from the database's log
    assert "step 1: list the notes — proven by" in report  # the volume's plan
    # The report is the only file the run wrote.
    assert files_under(work) == [str(report_path.relative_to(work))]
