"""Erasure in a PostgreSQL fact database: the facts tier of ``codegen memory erase`` when facts
live in PostgreSQL (``memory.backend: postgres``).

The same semantics as the local fact tier (``runtime.erasure.fact_tier``), over every tenant and
spec in the database (an owner's action, not an agent's): facts whose text or tags match the
subject are **deleted** with their tombstones and vectors; a fact an erased one had superseded
stays dead (``forgotten``, reason ``its replacement was erased``); held writes that match are
deleted; tombstone reasons that mention the subject are redacted. One transaction,
then ``VACUUM FULL`` of the touched tables, so the deleted rows' bytes leave the table files
(it takes an exclusive lock on each table for its duration). WAL segments and backups taken
before the erasure are the database operator's to expire.

Matching runs here, in Python, with the subject's own patterns (a PostgreSQL regex would match
differently); rows are streamed with a server-side cursor.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from specwire.runtime.erasure.subject import Subject

if TYPE_CHECKING:
    from psycopg import Connection

REPLACEMENT_ERASED = "its replacement was erased"  # as the local fact tier
_BATCH = 2000
# A database that does not answer is an error, not a hang: no receipt is written without it.
CONNECT_TIMEOUT_S = 10


@dataclass(frozen=True)
class PostgresErasure:
    facts: int
    quarantined: int
    vectors: int
    reasons_redacted: int
    # Matches left after the erasure (0 when it worked): facts, held writes and reasons.
    remaining: int


def erase_in_database(dsn: str, subject: Subject) -> PostgresErasure:
    """Erase ``subject`` from the fact database at ``dsn`` (every tenant and spec)."""
    import psycopg

    with psycopg.connect(dsn, connect_timeout=CONNECT_TIMEOUT_S) as conn:
        if not _has_schema(conn):
            return PostgresErasure(0, 0, 0, 0, 0)
        vector_tables = _vector_tables(conn)
        with conn.transaction():
            ids = _matching(conn, "SELECT id, text, tags FROM facts", subject)
            held = _matching(conn, "SELECT id, text, tags FROM quarantine", subject)
            vectors = 0
            for table in vector_tables:
                cursor = conn.execute(f"DELETE FROM {table} WHERE fact_id = ANY(%s)", (ids,))
                vectors += cursor.rowcount
            conn.execute(
                "UPDATE tombstones SET kind = 'forgotten', reason = %s, superseded_by = NULL "
                "WHERE superseded_by = ANY(%s)",
                (REPLACEMENT_ERASED, ids),
            )
            conn.execute(
                "UPDATE facts SET superseded_by = NULL WHERE superseded_by = ANY(%s)", (ids,)
            )
            conn.execute("DELETE FROM tombstones WHERE target = ANY(%s)", (ids,))
            facts = conn.execute("DELETE FROM facts WHERE id = ANY(%s)", (ids,)).rowcount
            quarantined = conn.execute(
                "DELETE FROM quarantine WHERE id = ANY(%s)", (held,)
            ).rowcount
            redacted = _redact_reasons(conn, subject)
    _vacuum(dsn, ["facts", "tombstones", "quarantine", *vector_tables])
    return PostgresErasure(facts, quarantined, vectors, redacted, remaining(dsn, subject))


def remaining(dsn: str, subject: Subject) -> int:
    """How many facts, held writes and tombstone reasons still match ``subject``."""
    import psycopg

    with psycopg.connect(dsn, connect_timeout=CONNECT_TIMEOUT_S) as conn:
        if not _has_schema(conn):
            return 0
        facts = _matching(conn, "SELECT id, text, tags FROM facts", subject)
        held = _matching(conn, "SELECT id, text, tags FROM quarantine", subject)
        reasons = _matching(
            conn,
            "SELECT target, reason, ARRAY[]::text[] FROM tombstones WHERE reason IS NOT NULL",
            subject,
        )
        return len(facts) + len(held) + len(reasons)


def _matching(conn: Connection[Any], query: str, subject: Subject) -> list[str]:
    found: list[str] = []
    with conn.cursor(name="specwire_erasure_scan") as cursor:
        cursor.itersize = _BATCH
        cursor.execute(query)
        for row_id, text, tags in cursor:
            if subject.matches(text) or any(subject.matches(tag) for tag in tags or ()):
                found.append(row_id)
    return found


def _redact_reasons(conn: Connection[Any], subject: Subject) -> int:
    rows = conn.execute("SELECT target, reason FROM tombstones WHERE reason IS NOT NULL").fetchall()
    changed = [
        (subject.redact(reason), target) for target, reason in rows if subject.matches(reason)
    ]
    for reason, target in changed:
        conn.execute("UPDATE tombstones SET reason = %s WHERE target = %s", (reason, target))
    return len(changed)


def _has_schema(conn: Connection[Any]) -> bool:
    row = conn.execute("SELECT to_regclass('public.facts') IS NOT NULL").fetchone()
    return bool(row and row[0])


def _vector_tables(conn: Connection[Any]) -> list[str]:
    rows = conn.execute(
        "SELECT tablename FROM pg_tables WHERE schemaname = 'public' "
        "AND tablename ~ '^fact_vectors_[0-9]+$' ORDER BY tablename"
    ).fetchall()
    return [row[0] for row in rows]


def _vacuum(dsn: str, tables: list[str]) -> None:
    import psycopg

    with psycopg.connect(dsn, autocommit=True, connect_timeout=CONNECT_TIMEOUT_S) as conn:
        for table in tables:
            conn.execute(f"VACUUM FULL {table}")
