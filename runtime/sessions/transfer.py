"""A session log moved whole between the file layout and PostgreSQL (``codegen memory
migrate``): its chain read and verified at the source, written sealed again with the
destination's key.

A log's chain is its events as sealed bodies (``seq``, ``type``, ``at``, ``payload``), numbered
1..n. Reading it for a move is stricter than reading it as evidence (which skips what does not
verify): every line or row must carry the source key's seal for this session, at the number its
body names, with no number missing. A log that is not whole is refused (``TamperedLog``, one
line naming it) before anything of it is written. The one thing skipped is a torn line of a
file log (a host killed mid-write leaves the start of a JSON line, which the next append ends
with a newline and whose number it takes again): never evidence, never an event.

Writing is all or nothing per session: a file written atomically beside the others, or every
row in one transaction under the session's append lock, and only when the destination holds no
event of that session yet. Each event keeps its ``seq`` and ``at``; only its seal changes (the
destination's key: ``sessions/.evidence.key`` on files, ``session_log_keys`` per tenant and
spec in the database).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from specwire.runtime.core.errors import StoreError
from specwire.runtime.fs.fenced import write_atomic
from specwire.runtime.fs.safe_open import open_regular
from specwire.runtime.pg.migrations import advisory_key
from specwire.runtime.pg.pool import translated
from specwire.runtime.sessions.log import evidence_key, seal, session_log_path, verified_event

if TYPE_CHECKING:
    from specwire.runtime.sessions.postgres import PostgresSessionLogs

# A sealed event's body: {"seq", "type", "at", "payload"}.
Body = dict[str, Any]

LOG_SUFFIX: Final = ".jsonl"


class TamperedLog(StoreError):
    """A source log that is not whole: a line or row whose seal does not verify, or a gap."""


def file_session_ids(sessions_dir: Path) -> list[str]:
    """The sessions with a log file in ``sessions_dir``, in id order (hidden files and anything
    but a regular ``.jsonl`` file are not logs)."""
    if not sessions_dir.is_dir():
        return []
    return sorted(
        path.name.removesuffix(LOG_SUFFIX)
        for path in sessions_dir.iterdir()
        if path.name.endswith(LOG_SUFFIX)
        and not path.name.startswith(".")
        and path.is_file()
        and not path.is_symlink()
    )


def is_log_name(session_id: str) -> bool:
    """Whether ``session_id`` can name a log file (one plain path component)."""
    return (
        bool(session_id)
        and "/" not in session_id
        and "\0" not in session_id
        and not session_id.startswith(".")
    )


def file_chain(sessions_dir: Path, session_id: str) -> list[Body]:
    """The sealed bodies of a log file, verified whole with the folder's key."""
    path = session_log_path(sessions_dir, session_id)
    name = f"session log {path}"
    try:
        with open_regular(path) as handle:
            raw = handle.read()
    except FileNotFoundError:
        return []
    except OSError as exc:
        raise TamperedLog(f"{name} cannot be read: {exc}") from None
    key = evidence_key(sessions_dir)
    bodies: list[Body] = []
    for number, line in enumerate(raw.split(b"\n"), start=1):
        if not line:
            continue
        try:
            parsed = json.loads(line.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
            if line.startswith(b'{"'):
                continue  # a torn write: the host took its number again
            raise TamperedLog(f"{name}: line {number} is not an event the host wrote") from None
        if not isinstance(parsed, dict) or key is None:
            raise TamperedLog(f"{name}: line {number} is not sealed by the host's key")
        mac = parsed.pop("mac", None)
        event = verified_event(parsed, mac, key, session_id)
        if event is None:
            raise TamperedLog(f"{name}: line {number}'s seal does not verify")
        bodies.append(parsed)
    _check_numbers(name, bodies)
    return bodies


def database_chain(logs: PostgresSessionLogs, session_id: str) -> list[Body]:
    """The sealed bodies of a session's rows, verified whole with the tenant's key."""
    name = f"session log {session_id} (tenant {logs.tenant}, spec {logs.spec})"
    with translated("read a session log"), logs.pool.connection() as conn:
        rows = conn.execute(
            "SELECT seq, body, mac FROM session_log_events WHERE tenant = %s AND spec = %s "
            "AND session = %s ORDER BY seq",
            (logs.tenant, logs.spec, session_id),
        ).fetchall()
    if not rows:
        return []
    key = logs.key()
    bodies: list[Body] = []
    for seq, body_text, mac in rows:
        try:
            body = json.loads(body_text)
        except (json.JSONDecodeError, RecursionError):
            body = None
        event = verified_event(body, mac, key, session_id)
        if event is None or event.seq != seq:
            raise TamperedLog(f"{name}: the row at seq {seq} is not sealed by the tenant's key")
        bodies.append(body)
    _check_numbers(name, bodies)
    return bodies


def _check_numbers(name: str, bodies: list[Body]) -> None:
    for expected, body in enumerate(bodies, start=1):
        seq = body.get("seq")
        if seq != expected or isinstance(seq, bool):
            raise TamperedLog(
                f"{name}: event {expected} is numbered {seq!r} (a line is missing or moved)"
            )


def file_line(key: bytes, session_id: str, body: Body) -> str:
    """One log line, as ``SessionLog.append`` writes it."""
    return json.dumps(
        {**body, "mac": seal(key, session_id, body)}, ensure_ascii=False, sort_keys=True
    )


def write_file_log(root: Path, sessions_dir: Path, session_id: str, bodies: list[Body]) -> None:
    """Write a whole log file, sealed with the folder's key (created on first use); ``root``
    is the store root the folder is beneath. The caller checked it holds no such log."""
    if not is_log_name(session_id):
        raise StoreError(f"session {session_id!r} cannot name a log file")
    sessions_dir.mkdir(parents=True, exist_ok=True)
    key = evidence_key(sessions_dir, create=True)
    assert key is not None
    text = "".join(file_line(key, session_id, body) + "\n" for body in bodies)
    write_atomic(session_log_path(sessions_dir, session_id), text, root=root)


def insert_database_log(logs: PostgresSessionLogs, session_id: str, bodies: list[Body]) -> bool:
    """Insert a whole log's rows, sealed with the tenant's key, in one transaction under the
    session's append lock; False (nothing written) when the session has rows already."""
    key = logs.key()
    lock = advisory_key(f"specwire.session_log.{logs.tenant}.{logs.spec}.{session_id}")
    with (
        translated("write a session log"),
        logs.pool.connection() as conn,
        conn.transaction(),
    ):
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (lock,))
        there = conn.execute(
            "SELECT 1 FROM session_log_events WHERE tenant = %s AND spec = %s "
            "AND session = %s LIMIT 1",
            (logs.tenant, logs.spec, session_id),
        ).fetchone()
        if there is not None:
            return False
        with conn.cursor() as cursor:
            cursor.executemany(
                "INSERT INTO session_log_events (tenant, spec, session, seq, kind, body, mac) "
                "VALUES (%s, %s, %s, %s, %s, %s, %s)",
                [
                    (
                        logs.tenant,
                        logs.spec,
                        session_id,
                        body["seq"],
                        body["type"],
                        json.dumps(body, ensure_ascii=False, sort_keys=True),
                        seal(key, session_id, body),
                    )
                    for body in bodies
                ],
            )
    return True
