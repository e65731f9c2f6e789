"""The database session-log reader's verified prefixes (``runtime.sessions.postgres``) on a real
server (pgserver): a re-read fetches only the rows appended since and answers exactly what a
first read would, and a prefix changed in any way (erased, tampered, shortened, re-keyed) is
read again from the start."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "conformance"))
from conformance_harness import PostgresServerForTests  # noqa: E402

from specwire.runtime.pg.pool import open_pool  # noqa: E402
from specwire.runtime.sessions import postgres as pg_logs  # noqa: E402
from specwire.runtime.sessions.postgres import PostgresSessionLogs  # noqa: E402

pytestmark = pytest.mark.postgres

SESSION = "sess_0123456789abcdef"


@pytest.fixture
def database() -> Iterator[str]:
    uri = PostgresServerForTests.fresh_database()
    yield uri
    PostgresServerForTests.drop_database(uri)


@pytest.fixture
def pool(database: str) -> Iterator[Any]:
    opened = open_pool(database, max_size=4)
    yield opened
    opened.close()


def seen(logs: PostgresSessionLogs) -> list[tuple[int, str, Any]]:
    return [(e.seq, e.type, e.payload) for e in logs.events(SESSION)]


def fresh_read(database: str) -> list[tuple[int, str, Any]]:
    """What a reader with nothing cached reads (another pool: another cache)."""
    other = open_pool(database, max_size=1)
    try:
        return seen(PostgresSessionLogs(other, tenant="acme", spec="bot"))
    finally:
        other.close()


def sql(database: str, statement: str, *args: Any) -> None:
    import psycopg

    with psycopg.connect(database, autocommit=True) as conn:
        conn.execute(statement, args)


def test_a_reread_fetches_only_the_appended_rows_and_reads_what_a_first_read_would(
    pool: Any, database: str
) -> None:
    logs = PostgresSessionLogs(pool, tenant="acme", spec="bot")
    log = logs.open(SESSION)
    for turn in range(1, 4):
        log.append("user_message", {"text": f"question {turn}", "turn": turn})
        log.append("assistant_message", {"text": f"answer {turn}", "turn": turn})
        # A new reader per turn (as per-turn hosts build them) still starts from the prefix.
        reader = PostgresSessionLogs(pool, tenant="acme", spec="bot")
        assert seen(reader) == fresh_read(database)
        known = pg_logs._known_prefix(pool, ("acme", "bot", SESSION))
        assert known is not None and known.upto == 2 * turn
    # A forged row appended after the prefix is still never evidence.
    sql(
        database,
        "INSERT INTO session_log_events VALUES ('acme', 'bot', %s, 7, 'user_message', %s, %s)",
        SESSION,
        json.dumps({"seq": 7, "type": "user_message", "at": "x", "payload": {}}),
        "0" * 64,
    )
    assert [seq for seq, *_ in seen(logs)] == [1, 2, 3, 4, 5, 6]
    log.append("user_message", {"text": "question 4", "turn": 4})  # seq 8
    assert [seq for seq, *_ in seen(logs)] == [1, 2, 3, 4, 5, 6, 8]
    assert seen(logs) == fresh_read(database)


def test_an_erasure_in_the_verified_prefix_is_read_at_once(pool: Any, database: str) -> None:
    from specwire.runtime.erasure.postgres_tier import erase_in_database
    from specwire.runtime.erasure.subject import Subject

    logs = PostgresSessionLogs(pool, tenant="acme", spec="bot")
    log = logs.open(SESSION)
    log.append("user_message", {"text": "Alice Smith asked", "turn": 1})
    log.append("assistant_message", {"text": "noted", "turn": 1})
    assert "Alice" in json.dumps(seen(logs))  # verified and kept
    erase_in_database(database, Subject.literal("Alice Smith"))
    after = seen(logs)
    assert "Alice" not in json.dumps(after) and len(after) == 2
    assert after == fresh_read(database)


@pytest.mark.parametrize(
    "change",
    [
        # a body edited in place (its seal no longer verifies: the event is gone)
        "UPDATE session_log_events SET body = replace(body, 'question', 'QUESTION') WHERE seq = 1",
        # a row deleted from the prefix
        "DELETE FROM session_log_events WHERE seq = 2",
        # a row's seal replaced
        "UPDATE session_log_events SET mac = repeat('0', 64) WHERE seq = 1",
        # the tenant's key replaced: nothing verifies
        "UPDATE session_log_keys SET key = decode(repeat('ab', 32), 'hex')",
    ],
)
def test_a_prefix_changed_in_place_is_read_again(pool: Any, database: str, change: str) -> None:
    logs = PostgresSessionLogs(pool, tenant="acme", spec="bot")
    log = logs.open(SESSION)
    log.append("user_message", {"text": "question 1", "turn": 1})
    log.append("assistant_message", {"text": "answer 1", "turn": 1})
    log.append("user_message", {"text": "question 2", "turn": 2})
    assert len(seen(logs)) == 3
    sql(database, change)
    reader = PostgresSessionLogs(pool, tenant="acme", spec="bot")  # a new turn's reader
    assert seen(reader) == fresh_read(database)
    assert len(seen(reader)) < 3
