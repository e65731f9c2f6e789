"""``codegen memory migrate`` moves the usage ledger and the sealed session logs between files
and PostgreSQL (both ways): the ledger's totals (the turns' and the dream's) whole, every event
with its seq and ``at`` sealed again with the target's key, a second run adding nothing, a
tampered log refused with nothing of it written, a log the target holds otherwise never
merged."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from state_support import PostgresServerForTests  # noqa: E402

from specwire.runtime.core.paths import StoreLayout  # noqa: E402
from specwire.runtime.facts.providers.connect import (  # noqa: E402
    DEFAULT_TENANT,
    close_shared_pools,
)
from specwire.runtime.owner.command import main as owner  # noqa: E402
from specwire.runtime.pg.pool import shared_pool  # noqa: E402
from specwire.runtime.sessions.log import (  # noqa: E402
    SessionLog,
    evidence_key,
    read_events,
    resolve_tool_use,
    session_log_path,
)
from specwire.runtime.sessions.postgres import PostgresSessionLogs  # noqa: E402
from specwire.runtime.usage.database import read_row  # noqa: E402
from specwire.runtime.usage.files import ledger_bytes, ledger_path, read_ledger  # noqa: E402
from specwire.runtime.usage.totals import DreamUsage, TenantUsage  # noqa: E402

pytestmark = pytest.mark.postgres

FIRST = "sess_00000000000000a1"
SECOND = "sess_00000000000000b2"
OTHER_SPEC = "sess_00000000000000c3"
TURNS = TenantUsage(input=1200, output=340, cached=100, turns=3, estimated=90)
DREAM = DreamUsage(runs=1, calls=2, input=500, output=80, cached=0, cost_micro_usd=4200)


@pytest.fixture
def database(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    uri = PostgresServerForTests.fresh_database()
    monkeypatch.setenv("STATE_DATABASE_URL", uri)
    yield uri
    close_shared_pools()
    PostgresServerForTests.drop_database(uri)


class Ticking:
    def __init__(self) -> None:
        self.moment = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        self.moment += timedelta(seconds=7)
        return self.moment


def agent_ran(work: Path) -> StoreLayout:
    """A file-state agent's root: facts, a ledger, two sessions of ``demo``, one of another."""
    from specwire.runtime.facts.store import FactStore

    layout = StoreLayout.for_cwd(work, "demo")
    layout.facts_db.parent.mkdir(parents=True, exist_ok=True)
    facts = FactStore.open(layout.facts_db)
    facts.remember("the ledger and the logs move with the facts")
    facts.close()
    path = ledger_path(layout.root, "demo")
    path.parent.mkdir(parents=True)
    path.write_bytes(ledger_bytes(TURNS, DREAM))
    clock = Ticking()
    for session, spec in ((FIRST, "demo"), (SECOND, "demo"), (OTHER_SPEC, "ops")):
        log = SessionLog(layout.sessions_dir, session, now=clock)
        log.append("session_start", {"spec": spec, "target": "managed"})
        log.append("user_message", {"text": f"ship it — {session}", "turn": 1})
        log.append("tool_use", {"id": f"tu_{session}", "name": "bash", "input": {"cmd": "ls"}})
        log.append(
            "tool_result",
            {"toolUseId": f"tu_{session}", "name": "bash", "isError": False, "text": "ok"},
        )
        log.append("session_end", {"stopReason": "complete", "turns": 1})
    return layout


def migrate(
    capsys: pytest.CaptureFixture[str], root: Path, *argv: str
) -> tuple[int, dict[str, Any], str]:
    code = owner(
        [
            "migrate",
            *argv,
            "--root",
            str(root),
            "--spec",
            "demo",
            "--yes",
            "--dsn",
            "$STATE_DATABASE_URL",
            "--json",
        ]
    )
    out, err = capsys.readouterr()
    return code, json.loads(out) if out.strip() else {}, err


def bodies(events: Iterator[Any]) -> list[tuple[int, str, str, dict[str, Any]]]:
    return [(e.seq, e.type, e.at, e.payload) for e in events]


def test_usage_and_session_logs_move_both_ways_and_a_second_run_adds_nothing(
    database: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    layout = agent_ran(tmp_path / "files")
    logs = PostgresSessionLogs(shared_pool(database), tenant=DEFAULT_TENANT, spec="demo")
    on_files = {
        s: bodies(read_events(session_log_path(layout.sessions_dir, s))) for s in (FIRST, SECOND)
    }

    code, first, err = migrate(capsys, tmp_path / "files", "--from", "file", "--to", "postgres")
    assert code == 0, err
    assert first["usage"]["outcome"] == "copied" and first["usage"]["turns"] == 3
    assert first["sessions"]["copied"] == 2 and first["sessions"]["events"] == 10
    with shared_pool(database).connection() as conn:
        assert read_row(conn, DEFAULT_TENANT, "demo") == (TURNS, DREAM)
    # Every event with its seq and ``at``, verifying with the database's own key.
    assert logs.sessions() == [FIRST, SECOND]
    for session, events in on_files.items():
        assert bodies(logs.events(session)) == events
    assert logs.key() != evidence_key(layout.sessions_dir)
    assert resolve_tool_use(logs, FIRST, f"tu_{FIRST}").verdict == "verified"

    code, again, err = migrate(capsys, tmp_path / "files", "--from", "file", "--to", "postgres")
    assert code == 0, err
    assert again["usage"]["outcome"] == "present"
    assert again["sessions"] == {**first["sessions"], "copied": 0, "events": 0, "alreadyThere": 2}
    with shared_pool(database).connection() as conn:
        assert read_row(conn, DEFAULT_TENANT, "demo") == (TURNS, DREAM)  # not doubled
        rows = conn.execute("SELECT count(*) FROM session_log_events").fetchone()
    assert rows is not None and rows[0] == 10

    back = tmp_path / "back"
    code, returned, err = migrate(
        capsys, tmp_path / "files", "--from", "postgres", "--to", "file", "--to-root", str(back)
    )
    assert code == 0, err
    assert returned["usage"]["outcome"] == "copied" and returned["sessions"]["copied"] == 2
    moved = StoreLayout.for_cwd(back, "demo")
    assert ledger_path(moved.root, "demo").read_bytes() == ledger_bytes(TURNS, DREAM)
    assert read_ledger(ledger_path(moved.root, "demo")) == (TURNS, DREAM)
    new_key = evidence_key(moved.sessions_dir)
    assert new_key is not None and new_key not in (logs.key(), evidence_key(layout.sessions_dir))
    for session, events in on_files.items():
        assert bodies(read_events(session_log_path(moved.sessions_dir, session))) == events
    assert not session_log_path(moved.sessions_dir, OTHER_SPEC).exists()  # another spec's
    code, _, err = migrate(
        capsys, tmp_path / "files", "--from", "postgres", "--to", "file", "--to-root", str(back)
    )
    assert code == 0, err


def test_a_tampered_log_is_refused_whole_and_the_others_move(
    database: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    layout = agent_ran(tmp_path / "files")
    path = session_log_path(layout.sessions_dir, SECOND)
    lines = path.read_text(encoding="utf-8").splitlines()
    lines[1] = lines[1].replace("ship it", "wire the money")  # an edited payload, seal kept
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")

    code, _, err = migrate(capsys, tmp_path / "files", "--from", "file", "--to", "postgres")
    assert code == 3
    refusals = [line for line in err.splitlines() if line.startswith("codegen memory migrate: ")]
    assert len(refusals) == 1 and str(path) in refusals[0] and "line 2" in refusals[0]
    assert "Traceback" not in err
    logs = PostgresSessionLogs(shared_pool(database), tenant=DEFAULT_TENANT, spec="demo")
    assert logs.sessions() == [FIRST]  # nothing of the tampered one
    assert len(list(logs.events(FIRST))) == 5


def test_a_session_the_target_holds_otherwise_is_refused_not_merged(
    database: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    agent_ran(tmp_path / "files")
    logs = PostgresSessionLogs(shared_pool(database), tenant=DEFAULT_TENANT, spec="demo")
    logs.append(FIRST, "session_start", {"spec": "demo", "target": "managed"})
    logs.append(FIRST, "user_message", {"text": "a turn served on the database", "turn": 1})
    held = bodies(logs.events(FIRST))

    code, _, err = migrate(capsys, tmp_path / "files", "--from", "file", "--to", "postgres")
    assert code == 3
    assert f"refused session log {FIRST}: the target holds it with other events" in err
    assert bodies(logs.events(FIRST)) == held  # not merged
    assert len(list(logs.events(SECOND))) == 5


def test_a_tampered_database_log_is_refused_on_the_way_back(
    database: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    agent_ran(tmp_path / "files")
    code, _, err = migrate(capsys, tmp_path / "files", "--from", "file", "--to", "postgres")
    assert code == 0, err
    with shared_pool(database).connection() as conn:
        conn.execute(
            "UPDATE session_log_events SET body = replace(body, 'ship it', 'drop it') "
            "WHERE session = %s AND seq = 2",
            (FIRST,),
        )
    back = tmp_path / "back"
    code, _, err = migrate(
        capsys, tmp_path / "files", "--from", "postgres", "--to", "file", "--to-root", str(back)
    )
    assert code == 3
    assert f"session log {FIRST} (tenant {DEFAULT_TENANT}, spec demo): the row at seq 2" in err
    sessions = StoreLayout.for_cwd(back, "demo").sessions_dir
    assert not session_log_path(sessions, FIRST).exists()
    assert len(list(read_events(session_log_path(sessions, SECOND)))) == 5


def test_a_ledger_the_target_counts_otherwise_is_left_alone(
    database: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from specwire.runtime.pg.migrations import migrate_once
    from specwire.runtime.usage.database import COMPONENT, USAGE_MIGRATIONS

    agent_ran(tmp_path / "files")
    pool = shared_pool(database)
    migrate_once(pool, COMPONENT, USAGE_MIGRATIONS)
    with pool.connection() as conn:
        conn.execute(
            "INSERT INTO usage_ledgers (tenant, spec, input, output, turns) "
            "VALUES (%s, 'demo', 10, 5, 1)",
            (DEFAULT_TENANT,),
        )
    code, _, err = migrate(capsys, tmp_path / "files", "--from", "file", "--to", "postgres")
    assert code == 3
    assert "the usage ledger was not copied" in err
    with pool.connection() as conn:
        assert read_row(conn, DEFAULT_TENANT, "demo")[0] == TenantUsage(10, 5, 0, 1, 0)


def test_a_mistyped_source_tenant_in_the_database_is_refused_creating_nothing(
    database: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--from postgres`` with ``--spec`` given still checks the tenant and spec against the
    database: a typo copied nothing, made the target's tenant folder and reported success."""
    agent_ran(tmp_path / "files")
    code, _, err = migrate(capsys, tmp_path / "files", "--from", "file", "--to", "postgres")
    assert code == 0, err
    back = tmp_path / "back"
    code, out, err = migrate(
        capsys,
        tmp_path / "files",
        "--tenant",
        "acme",
        "--from",
        "postgres",
        "--to",
        "file",
        "--to-root",
        str(back),
    )
    assert (code, out) == (2, {}), err
    assert "--tenant 'acme': no such tenant in the database" in err
    assert not back.exists()
