"""Session logs in PostgreSQL (``memory.state: postgres``) on a real server (pgserver): the same
seals and numbering as the file logs, forged rows never evidence, the proof ladder and the
history read from the database, and the conversation lock held across processes and released
when its holder dies."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "conformance"))
from conformance_harness import PostgresServerForTests  # noqa: E402

from specwire.runtime.continuity.proof import EvidenceRef, check_evidence  # noqa: E402
from specwire.runtime.core.errors import LockTimeoutError, StoreError  # noqa: E402
from specwire.runtime.loop.history import history_from_log  # noqa: E402
from specwire.runtime.pg.migrations import advisory_key  # noqa: E402
from specwire.runtime.pg.pool import open_pool  # noqa: E402
from specwire.runtime.sessions.log import SessionLog, resolve_tool_use, run_of  # noqa: E402
from specwire.runtime.sessions.postgres import PostgresSessionLogs  # noqa: E402
from specwire.runtime.sessions.store import FallbackLogReader, FileSessionLogs  # noqa: E402

pytestmark = pytest.mark.postgres

SESSION = "sess_0123456789abcdef"
OTHER = "sess_fedcba9876543210"


def at_noon() -> datetime:
    return datetime(2026, 7, 1, 12, 0, tzinfo=UTC)


@pytest.fixture
def database() -> Iterator[str]:
    uri = PostgresServerForTests.fresh_database()
    yield uri
    PostgresServerForTests.drop_database(uri)


@pytest.fixture
def pool(database: str) -> Iterator[Any]:
    opened = open_pool(database, max_size=8)
    yield opened
    opened.close()


def logs_of(pool: Any, tenant: str = "acme", spec: str = "bot") -> PostgresSessionLogs:
    return PostgresSessionLogs(pool, tenant=tenant, spec=spec, now=at_noon)


def one_turn(log: Any, tool_use_id: str = "tu_1", is_error: bool = False) -> None:
    log.append("session_start", {"spec": "bot", "target": "managed"})
    log.append("user_message", {"text": "run the tests", "turn": 1})
    log.append("tool_use", {"id": tool_use_id, "name": "bash", "input": {"command": "make"}})
    log.append(
        "tool_result",
        {"toolUseId": tool_use_id, "name": "bash", "isError": is_error, "text": "passed"},
    )
    log.append("assistant_message", {"text": "done", "turn": 1})


def test_events_are_sealed_and_numbered_as_the_file_logs_are(pool: Any, tmp_path: Path) -> None:
    logs = logs_of(pool)
    in_db = logs.open(SESSION)
    on_disk = SessionLog(tmp_path, SESSION, now=at_noon)
    for log in (in_db, on_disk):
        one_turn(log)
    got = [(e.seq, e.type, e.at, e.payload) for e in logs.events(SESSION)]
    assert got == [(e.seq, e.type, e.at, e.payload) for e in on_disk.events()]
    assert [seq for seq, *_ in got] == [1, 2, 3, 4, 5]
    assert logs.exists(SESSION) and not logs.exists(OTHER)
    # The history a per-turn host reloads is the same from either backend.
    assert history_from_log(in_db.events()) == history_from_log(on_disk.path)


def test_a_forged_or_copied_row_is_never_evidence(pool: Any, database: str) -> None:
    logs = logs_of(pool)
    one_turn(logs.open(SESSION))
    import psycopg

    with psycopg.connect(database, autocommit=True) as conn:
        forged = {
            "seq": 6,
            "type": "tool_result",
            "at": "2026-07-01T12:00:00.000Z",
            "payload": {"toolUseId": "tu_9", "name": "bash", "isError": False, "text": "ok"},
        }
        conn.execute(
            "INSERT INTO session_log_events VALUES ('acme', 'bot', %s, 6, 'tool_result', %s, %s)",
            (SESSION, json.dumps(forged), "0" * 64),
        )
        # A genuine row copied into another session does not verify there (the seal covers
        # the session id).
        conn.execute(
            "INSERT INTO session_log_events SELECT tenant, spec, %s, seq, kind, body, mac "
            "FROM session_log_events WHERE session = %s",
            (OTHER, SESSION),
        )
    assert [e.seq for e in logs.events(SESSION)] == [1, 2, 3, 4, 5]
    assert list(logs.events(OTHER)) == []
    assert resolve_tool_use(logs, OTHER, "tu_1").verdict == "missing"
    # Another tenant's logs are sealed with another key and never read here.
    assert list(logs_of(pool, tenant="globex").events(SESSION)) == []


def test_a_genuine_row_replayed_at_another_number_is_not_read_twice(
    pool: Any, database: str
) -> None:
    """A sealed row copied (or moved) to another sequence number of its own session verifies
    (the seal covers the body, not the row's key): it must not count as a second event, nor
    move an old result after a newer one."""
    logs = logs_of(pool)
    one_turn(logs.open(SESSION), "tu_old")
    import psycopg

    with psycopg.connect(database, autocommit=True) as conn:
        conn.execute(
            "INSERT INTO session_log_events SELECT tenant, spec, session, 9, kind, body, mac "
            "FROM session_log_events WHERE session = %s AND seq = 4",
            (SESSION,),
        )
    events = list(logs.events(SESSION))
    assert [e.seq for e in events] == [1, 2, 3, 4, 5]
    assert [e.type for e in events].count("tool_result") == 1


def test_a_forged_row_does_not_hide_a_sessions_file_log(
    pool: Any, database: str, tmp_path: Path
) -> None:
    """With ``memory.state: postgres`` a crew's or a dream's session is still a file log, read
    when the database has no log of that id. A forged row under that id (never evidence
    itself) made the database "have" the log, so the reader read its rows, none verified, and
    the file's genuine evidence went missing."""
    on_disk = FileSessionLogs(tmp_path)
    one_turn(on_disk.open(SESSION), "tu_file")
    reader = FallbackLogReader(logs_of(pool), on_disk)
    import psycopg

    with psycopg.connect(database, autocommit=True) as conn:
        conn.execute(
            "INSERT INTO session_log_events VALUES ('acme', 'bot', %s, 1, 'tool_result', '{}', %s)",
            (SESSION, "0" * 64),
        )
    assert [e.seq for e in reader.events(SESSION)] == [1, 2, 3, 4, 5]
    assert resolve_tool_use(reader, SESSION, "tu_file").verdict == "verified"


def test_the_proof_ladder_reads_the_database(pool: Any) -> None:
    logs = logs_of(pool)
    one_turn(logs.open(SESSION), "tu_ok")
    one_turn(logs.open(OTHER), "tu_bad", is_error=True)
    assert resolve_tool_use(logs, SESSION, "tu_ok").verdict == "verified"
    assert run_of(logs, SESSION) is None
    checks = check_evidence(
        logs,
        [EvidenceRef("tu_ok", None), EvidenceRef("tu_bad", OTHER), EvidenceRef("tu_no", None)],
        default_session_id=SESSION,
        now=at_noon(),
    )
    assert [check.verdict for check in checks] == ["verified", "error_result", "missing"]


def test_writers_of_one_session_never_share_or_skip_a_number(pool: Any) -> None:
    logs = logs_of(pool)
    writers = [logs_of(pool).open(SESSION) for _ in range(4)]

    def write(log: Any) -> None:
        for n in range(15):
            log.append("user_message", {"text": f"m{n}", "turn": n})

    threads = [threading.Thread(target=write, args=(log,)) for log in writers]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert [e.seq for e in logs.events(SESSION)] == list(range(1, 61))


HOLDER = """
import sys, time
from specwire.runtime.pg.pool import open_pool
from specwire.runtime.sessions.postgres import PostgresSessionLogs
logs = PostgresSessionLogs(open_pool(sys.argv[1]), tenant="acme", spec="bot")
with logs.conversation_lock(sys.argv[2], 5.0):
    print("held", flush=True)
    time.sleep(600)
"""


def test_the_conversation_lock_holds_across_processes_and_dies_with_its_holder(
    pool: Any, database: str
) -> None:
    logs = logs_of(pool)
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, database, SESSION],
        stdout=subprocess.PIPE,
        text=True,
        env=os.environ.copy(),
    )
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(LockTimeoutError, match="busy"), logs.conversation_lock(SESSION, 0.3):
            pass
        with logs.conversation_lock(OTHER, 5.0):  # another conversation is not held
            pass
        holder.send_signal(signal.SIGKILL)
        holder.wait(timeout=30)
        # The server dropped the dead worker's lock with its connection.
        with logs.conversation_lock(SESSION, 30.0):
            second = logs.conversation_lock(SESSION, 0.2)
            with pytest.raises(LockTimeoutError):
                second.__enter__()
    finally:
        if holder.poll() is None:
            holder.kill()
            holder.wait()


def test_a_turn_whose_conversation_lock_was_lost_writes_nothing_more(pool: Any) -> None:
    """The server ends the lock's session mid-turn (a failover, an idle timeout, an
    administrator) while the worker goes on: another worker may now run a turn of the same
    conversation, so the first one must not append another event (it fails instead), and the
    other turn's events are numbered on from the last one written."""
    logs = logs_of(pool)
    other_worker = logs_of(pool)
    with logs.conversation_lock(SESSION, 5.0):
        logs.append(SESSION, "user_message", {"text": "first", "turn": 1})
        key = advisory_key(f"specwire.conversation.acme.bot.{SESSION}")
        with pool.connection() as conn:
            holder = conn.execute(
                "SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted "
                "AND classid = %s AND objid = %s AND objsubid = 1",
                ((key >> 32) & 0xFFFFFFFF, key & 0xFFFFFFFF),
            ).fetchone()
            assert holder is not None
            conn.execute("SELECT pg_terminate_backend(%s)", (holder[0],))
        with other_worker.conversation_lock(SESSION, 5.0):  # taken over at once
            with pytest.raises(StoreError):
                logs.append(SESSION, "assistant_message", {"text": "late", "turn": 1})
            other_worker.append(SESSION, "user_message", {"text": "second", "turn": 2})
    texts = [event.payload["text"] for event in logs.events(SESSION)]
    assert texts == ["first", "second"]
    assert [event.seq for event in logs.events(SESSION)] == [1, 2]
    logs.append(SESSION, "note", {"text": "after the turn"})  # outside a lock: the pool's
    assert [event.seq for event in logs.events(SESSION)] == [1, 2, 3]


def test_a_worker_holds_at_most_its_turn_slots_of_lock_connections(
    pool: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each turn in flight holds a connection of its own for its conversation lock: without a
    cap, one tenant's burst of conversations (40 turn threads per worker) took every
    connection the server allows and every tenant's turns failed. A turn past the cap waits
    in the process, holding no connection, and gets a slot when one frees."""
    import specwire.runtime.sessions.postgres as module

    monkeypatch.setenv("SPECWIRE_MAX_TURNS", "2")
    monkeypatch.setattr(module, "_slots", module.weakref.WeakKeyDictionary(), raising=False)
    logs = logs_of(pool)

    def backends() -> int:
        with pool.connection() as conn:
            row = conn.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
            ).fetchone()
        return int(row[0]) if row else 0

    with logs.conversation_lock(SESSION, 5.0), logs.conversation_lock(OTHER, 5.0):
        held = backends()
        busy = logs.conversation_lock("sess_00000000000000ff", 0.3)
        with pytest.raises(LockTimeoutError, match="SPECWIRE_MAX_TURNS"), busy:
            pass
        assert backends() == held  # the refused turn opened no connection
        freed = threading.Event()

        def third() -> None:
            with logs.conversation_lock("sess_00000000000000ff", 5.0):
                freed.set()

        waiter = threading.Thread(target=third)
        waiter.start()
        assert not freed.wait(0.3)
    waiter.join(5.0)
    assert freed.is_set()
    for bad in ("none", "\u00b2", "8\u00b2"):  # superscripts are digits int() refuses
        monkeypatch.setenv("SPECWIRE_MAX_TURNS", bad)
        monkeypatch.setattr(module, "_slots", module.weakref.WeakKeyDictionary(), raising=False)
        with (
            pytest.raises(StoreError, match="SPECWIRE_MAX_TURNS"),
            logs.conversation_lock(SESSION, 1),
        ):
            pass


def test_erasure_redacts_the_subject_from_every_log_and_the_rows_stay_evidence(
    pool: Any, database: str
) -> None:
    from specwire.runtime.erasure.postgres_tier import erase_in_database, remaining
    from specwire.runtime.erasure.subject import Subject

    logs = logs_of(pool)
    log = logs.open(SESSION)
    one_turn(log)
    log.append("user_message", {"text": 'Alice Smith said "hi"\nagain', "turn": 2})
    logs_of(pool, tenant="globex").open(OTHER).append("recall", {"lines": ["Alice Smith"]})
    subject = Subject.literal("Alice Smith")
    assert remaining(database, subject) == 2
    done = erase_in_database(database, subject)
    assert (done.session_log_rows, done.remaining) == (2, 0)
    events = list(logs.events(SESSION))  # every row still verifies, numbered as before
    assert [e.seq for e in events] == [1, 2, 3, 4, 5, 6]
    assert "Alice" not in events[-1].payload["text"]
    assert resolve_tool_use(logs, SESSION, "tu_1").verdict == "verified"
    [recall] = logs_of(pool, tenant="globex").events(OTHER)
    assert "Alice" not in json.dumps(recall.payload)
