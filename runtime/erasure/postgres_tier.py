"""Erasure in a PostgreSQL fact database: the facts tier of ``codegen memory erase`` when facts
live in PostgreSQL (``memory.backend: postgres``).

The same semantics as the local fact tier (``runtime.erasure.fact_tier``), over every tenant and
spec in the database (an owner's action, not an agent's), or with ``tenant`` over that tenant's
rows only (``erase --tenant ID``: a managed bundle's user ids are the tenant's own, so another
tenant's "ana" is another person; ``database_tenants`` lists the tenants present): facts whose
text or tags match the subject are **deleted** with their tombstones and vectors; a fact an
erased one had superseded stays dead (``forgotten``, reason ``its replacement was erased``);
held writes that match are deleted; tombstone reasons that mention the subject are redacted.
One transaction, then ``VACUUM FULL`` of the touched tables, so the deleted rows' bytes leave
the table files (it takes an exclusive lock on each table for its duration). WAL segments and
backups taken before the erasure are the database operator's to expire.

Matching runs here, in Python, with the subject's own patterns (a PostgreSQL regex would match
differently); rows are streamed with a server-side cursor.

With a scope ``key`` (``erase --user ID``) the rows stored in that key go too, whatever their
text, and rows whose scope subject holds the subject (a conversation keyed by the person); a
database from before scopes has no scope columns and only ``agent`` rows.

Documents kept in the same database (``runtime.documents.postgres``, every tenant and spec) are
**redacted**, as the file tier redacts a document's JSON file: the subject is replaced in the
title, text and summary of every row (a removed one included), and the row's revision moves
on, so a save based on the text before the erasure is refused as stale instead of writing the
subject back. Documents belong to the agent, not to a scope key: ``--user`` redacts the person's
mentions there and deletes no document. A document id is structure (as a file name is) and is
never changed; an id that holds the subject is counted as remaining.

Session logs kept in the same database (``memory.state: postgres``) are redacted row by row and
sealed again (``runtime.erasure.postgres_logs_tier``), as the file tier rewrites a log.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from specwire.runtime.core.scopes import ScopeKey
from specwire.runtime.erasure.postgres_logs_tier import TABLE as LOGS_TABLE
from specwire.runtime.erasure.postgres_logs_tier import (
    redact_session_logs,
    session_log_matches,
)
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
    # Facts and held writes deleted per scope name (never a subject).
    by_scope: dict[str, int] = field(default_factory=dict)
    # Document rows whose title, text or summary was redacted.
    documents: int = 0
    # Session log rows redacted (and sealed again).
    session_log_rows: int = 0
    # State documents (``runtime.erasure.state_tier``) redacted or renamed.
    state_documents: int = 0


STATISTICS_TABLES = ("lexical_terms", "lexical_scopes", "lexical_postings")


def erase_in_database(
    dsn: str, subject: Subject, key: ScopeKey | None = None, tenant: str | None = None
) -> PostgresErasure:
    """Erase ``subject`` (and with ``key``, everything in that scope key) from the fact
    database at ``dsn``: every tenant and spec, or with ``tenant`` that tenant's rows only
    (every spec of it)."""
    import psycopg

    with psycopg.connect(dsn, connect_timeout=CONNECT_TIMEOUT_S) as conn:
        has_facts, has_documents = _has_table(conn, "facts"), _has_table(conn, "documents")
        # The BM25 statistics (schema version 3) and postings (4): triggers update them as the
        # rows go (a word only the erased facts held loses its rows); vacuumed with the facts.
        statistics = [name for name in STATISTICS_TABLES if _has_table(conn, name)]
        has_logs = _has_table(conn, LOGS_TABLE)
    if not has_facts:
        if not has_documents and not has_logs:
            return PostgresErasure(0, 0, 0, 0, 0)
        return _erase_documents_only(dsn, subject, key, has_documents, has_logs, tenant)
    with psycopg.connect(dsn, connect_timeout=CONNECT_TIMEOUT_S) as conn:
        vector_tables = _vector_tables(conn)
        by_scope: dict[str, int] = {}
        with conn.transaction():
            ids = _matching(conn, "facts", subject, key, by_scope, tenant)
            held = _matching(conn, "quarantine", subject, key, by_scope, tenant)
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
            redacted = _redact_reasons(conn, subject, tenant)
            documents = _redact_documents(conn, subject, tenant) if has_documents else 0
            log_rows = redact_session_logs(conn, subject, tenant) if has_logs else 0
    _vacuum(
        dsn,
        [
            "facts",
            "tombstones",
            "quarantine",
            *vector_tables,
            *statistics,
            *(["documents"] if documents else []),
            *([LOGS_TABLE] if log_rows else []),
        ],
    )
    left = remaining(dsn, subject, key, tenant)
    return PostgresErasure(
        facts,
        quarantined,
        vectors,
        redacted,
        left,
        dict(sorted(by_scope.items())),
        documents,
        log_rows,
    )


def _erase_documents_only(
    dsn: str,
    subject: Subject,
    key: ScopeKey | None,
    has_documents: bool,
    has_logs: bool,
    tenant: str | None,
) -> PostgresErasure:
    """A database that holds documents or session logs and no facts (a bundle whose facts
    live elsewhere)."""
    import psycopg

    with psycopg.connect(dsn, connect_timeout=CONNECT_TIMEOUT_S) as conn, conn.transaction():
        documents = _redact_documents(conn, subject, tenant) if has_documents else 0
        log_rows = redact_session_logs(conn, subject, tenant) if has_logs else 0
    touched = [*(["documents"] if documents else []), *([LOGS_TABLE] if log_rows else [])]
    if touched:
        _vacuum(dsn, touched)  # after the connection closed: its locks are released
    return PostgresErasure(
        0,
        0,
        0,
        0,
        remaining(dsn, subject, key, tenant),
        documents=documents,
        session_log_rows=log_rows,
    )


def remaining(
    dsn: str, subject: Subject, key: ScopeKey | None = None, tenant: str | None = None
) -> int:
    """How many facts, held writes and tombstone reasons still match ``subject`` (or are
    stored in ``key``), in every tenant or in ``tenant``'s rows."""
    import psycopg

    with psycopg.connect(dsn, connect_timeout=CONNECT_TIMEOUT_S) as conn:
        documents = (
            len(_documents_matching(conn, subject, tenant)) if _has_table(conn, "documents") else 0
        )
        if _has_table(conn, LOGS_TABLE):
            documents += session_log_matches(conn, subject, tenant)
        if not _has_table(conn, "facts"):
            return documents
        facts = _matching(conn, "facts", subject, key, {}, tenant)
        held = _matching(conn, "quarantine", subject, key, {}, tenant)
        where, params = tenant_filter(tenant, "AND")
        reasons = _scan(
            conn,
            "SELECT target, reason, ARRAY[]::text[], 'agent', NULL FROM tombstones "
            f"WHERE reason IS NOT NULL{where}",
            subject,
            None,
            {},
            params,
        )
        return len(facts) + len(held) + len(reasons) + documents


def _matching(
    conn: Connection[Any],
    table: str,
    subject: Subject,
    key: ScopeKey | None,
    by_scope: dict[str, int],
    tenant: str | None = None,
) -> list[str]:
    """Ids of ``table``'s rows to delete (of every tenant, or of ``tenant``); counted per
    scope into ``by_scope``."""
    scoped = _scoped(conn, table)
    columns = "scope, subject" if scoped else "'agent', NULL"
    where, params = tenant_filter(tenant)
    return _scan(
        conn,
        f"SELECT id, text, tags, {columns} FROM {table}{where}",
        subject,
        key,
        by_scope,
        params,
    )


def tenant_filter(tenant: str | None, joined: str = "WHERE") -> tuple[str, tuple[str, ...]]:
    """The SQL condition (`` WHERE tenant = %s``, or `` AND …`` after another) narrowing a
    query to ``tenant``'s rows, and its parameters; nothing for every tenant."""
    if tenant is None:
        return "", ()
    return f" {joined} tenant = %s", (tenant,)


def database_tenants(dsn: str) -> list[str]:
    """Every tenant that keeps rows in the database at ``dsn`` (facts, held writes,
    documents, session logs, state documents), sorted."""
    import psycopg

    tables = ("facts", "quarantine", "documents", LOGS_TABLE, "state_documents")
    with psycopg.connect(dsn, connect_timeout=CONNECT_TIMEOUT_S) as conn:
        present = [table for table in tables if _has_table(conn, table)]
        if not present:
            return []
        union = " UNION ".join(f"SELECT DISTINCT tenant FROM {table}" for table in present)
        return sorted(row[0] for row in conn.execute(union).fetchall())


def _scan(
    conn: Connection[Any],
    query: str,
    subject: Subject,
    key: ScopeKey | None,
    by_scope: dict[str, int],
    params: tuple[str, ...] = (),
) -> list[str]:
    found: list[str] = []
    with conn.cursor(name="specwire_erasure_scan") as cursor:
        cursor.itersize = _BATCH
        cursor.execute(query, params)
        for row_id, text, tags, scope, scope_subject in cursor:
            in_key = key is not None and (scope, scope_subject) == (key.scope, key.subject)
            if (
                in_key
                or subject.matches(text)
                or any(subject.matches(tag) for tag in tags or ())
                or (scope_subject is not None and subject.names_key(scope_subject))
            ):
                found.append(row_id)
                by_scope[scope] = by_scope.get(scope, 0) + 1
    return found


def _scoped(conn: Connection[Any], table: str) -> bool:
    """Whether ``table`` records scope keys (the scopes migration ran)."""
    row = conn.execute(
        "SELECT count(*) FROM information_schema.columns WHERE table_schema = 'public' "
        "AND table_name = %s AND column_name IN ('scope', 'subject')",
        (table,),
    ).fetchone()
    return bool(row and row[0] == 2)


def _redact_reasons(conn: Connection[Any], subject: Subject, tenant: str | None = None) -> int:
    where, params = tenant_filter(tenant, "AND")
    rows = conn.execute(
        f"SELECT target, reason FROM tombstones WHERE reason IS NOT NULL{where}", params
    ).fetchall()
    changed = [
        (subject.redact(reason), target) for target, reason in rows if subject.matches(reason)
    ]
    for reason, target in changed:
        conn.execute("UPDATE tombstones SET reason = %s WHERE target = %s", (reason, target))
    return len(changed)


def _documents_matching(
    conn: Connection[Any], subject: Subject, tenant: str | None = None
) -> list[tuple[str, str, str, str, str, str]]:
    """(tenant, spec, id, title, text, summary) of every document row holding the subject
    (of every tenant, or of ``tenant``)."""
    found = []
    where, params = tenant_filter(tenant)
    with conn.cursor(name="specwire_erasure_documents") as cursor:
        cursor.itersize = _BATCH
        cursor.execute(
            f"SELECT tenant, spec, id, title, text, summary FROM documents{where}", params
        )
        for row in cursor:
            if any(subject.matches(value) for value in row[2:]):
                found.append(row)
    return found


def _redact_documents(conn: Connection[Any], subject: Subject, only: str | None = None) -> int:
    """Redact the subject from every document row's title, text and summary (of every tenant,
    or of tenant ``only``); the revision moves on so a save based on the old text conflicts.
    Returns the rows changed."""
    changed = 0
    for tenant, spec, identifier, title, text, summary in _documents_matching(conn, subject, only):
        redacted = [subject.redact(value) for value in (title, text, summary)]
        if redacted == [title, text, summary]:
            continue  # only the id holds it: structure, left for ``remaining`` to report
        conn.execute(
            "UPDATE documents SET title = %s, text = %s, summary = %s, revision = revision + 1 "
            "WHERE tenant = %s AND spec = %s AND id = %s",
            (*redacted, tenant, spec, identifier),
        )
        changed += 1
    return changed


def _has_table(conn: Connection[Any], name: str) -> bool:
    row = conn.execute("SELECT to_regclass(%s) IS NOT NULL", (f"public.{name}",)).fetchone()
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
