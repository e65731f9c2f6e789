"""Erasure in session logs kept in PostgreSQL (``memory.state: postgres``,
``runtime.sessions.postgres``): the database twin of the file tier's ``rewrite_log``.

Every row of ``session_log_events`` (every tenant and spec, or one tenant's) whose body holds
the subject is **redacted**: a host-sealed row is edited inside its JSON and sealed again with
its tenant's key, so it stays evidence with the text gone, keeping its sequence number; a row
whose seal does not verify (never evidence) is redacted as text. Runs inside the caller's
transaction.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from specwire.runtime.erasure.subject import Subject
from specwire.runtime.sessions.log import edit_strings, seal, verified_event

if TYPE_CHECKING:
    from psycopg import Connection

TABLE = "session_log_events"
_BATCH = 2000


def redact_session_logs(conn: Connection[Any], subject: Subject, only: str | None = None) -> int:
    """Redact ``subject`` from every session log row (of every tenant, or of tenant ``only``);
    the rows changed."""
    keys = {
        (tenant, spec): bytes(key)
        for tenant, spec, key in conn.execute(
            "SELECT tenant, spec, key FROM session_log_keys"
        ).fetchall()
    }
    changed: list[tuple[str, str, str, int, str, str]] = []
    for tenant, spec, session, seq, body_text, mac in _matching_rows(conn, subject, only):
        key = keys.get((tenant, spec))
        body = _parsed(body_text)
        if key is None or verified_event(body, mac, key, session) is None:
            changed.append((tenant, spec, session, seq, subject.redact(body_text), mac))
            continue
        edited = edit_strings(body, subject.redact)
        changed.append(
            (
                tenant,
                spec,
                session,
                seq,
                json.dumps(edited, ensure_ascii=False, sort_keys=True),
                seal(key, session, edited),
            )
        )
    for tenant, spec, session, seq, body_text, mac in changed:
        conn.execute(
            f"UPDATE {TABLE} SET body = %s, mac = %s WHERE tenant = %s AND spec = %s "
            "AND session = %s AND seq = %s",
            (body_text, mac, tenant, spec, session, seq),
        )
    return len(changed)


def session_log_matches(conn: Connection[Any], subject: Subject, tenant: str | None = None) -> int:
    """How many session log rows (of every tenant, or of ``tenant``) still hold ``subject``."""
    return len(_matching_rows(conn, subject, tenant))


def _matching_rows(
    conn: Connection[Any], subject: Subject, tenant: str | None
) -> list[tuple[Any, ...]]:
    found: list[tuple[Any, ...]] = []
    where, params = ("", ()) if tenant is None else (" WHERE tenant = %s", (tenant,))
    with conn.cursor(name="specwire_erasure_logs") as cursor:
        cursor.itersize = _BATCH
        cursor.execute(f"SELECT tenant, spec, session, seq, body, mac FROM {TABLE}{where}", params)
        for row in cursor:
            if subject.matches(row[4]) or subject.matches(_decoded(row[4])):
                found.append(tuple(row))
    return found


def _parsed(text: str) -> Any:
    try:
        return json.loads(text)
    except (json.JSONDecodeError, RecursionError):
        return None


def _decoded(text: str) -> str:
    """The body's strings as a reader sees them (JSON escapes undone), for matching."""
    body = _parsed(text)
    parts: list[str] = []

    def collect(value: Any) -> Any:
        parts.append(value)
        return value

    if body is not None:
        edit_strings(body, collect)
    return "\n".join(parts)
