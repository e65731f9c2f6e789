"""``PostgresDocumentStore``: a tenant's spec's documents in PostgreSQL, the file store's twin.

One row per document id (``documents``), keyed by ``(tenant, spec, id)``; every statement names
all three. A removed document keeps its row (``removed``, its text, title and summary cleared),
so its id stays reserved. Each change is one transaction that locks the row
(``SELECT … FOR UPDATE``), applies ``runtime.documents.store``'s rule and writes: two sessions
saving at once are serialized, and the second sees the first's revision. Two creates of one id
race to the primary key; the loser is told the id exists.

The documents' schema has its own version table (``document_schema_version``) and advisory
lock, beside the facts' (``runtime.facts.providers.postgres``): the tiers evolve apart, and a
database that never held a document gets no table until a document store opens on it.
Timestamps are the store's clock as ISO text (the file store's format), never the server's.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Final

from specwire.runtime.core.clock import Clock, iso, utc_now
from specwire.runtime.core.errors import StoreError
from specwire.runtime.documents import store as rules
from specwire.runtime.documents.model import (
    OWNER,
    AgentWrites,
    Document,
    DocumentExists,
    DocumentPage,
    Writer,
    document_id,
)

if TYPE_CHECKING:
    from psycopg import Connection
    from psycopg_pool import ConnectionPool

# Any fixed 64-bit number other than the facts' (``MIGRATION_LOCK`` there).
DOCUMENT_MIGRATION_LOCK: Final = 0x5EC_D0C5_0001
STATEMENT_TIMEOUT_MS: Final = 5_000

DOCUMENT_MIGRATIONS: Final[tuple[tuple[int, tuple[str, ...]], ...]] = (
    (
        1,
        (
            """CREATE TABLE documents (
                tenant text NOT NULL,
                spec text NOT NULL,
                id text NOT NULL,
                removed boolean NOT NULL DEFAULT false,
                title text NOT NULL,
                text text NOT NULL,
                summary text NOT NULL,
                agent_writes text NOT NULL CHECK (agent_writes IN ('enabled', 'disabled')),
                revision bigint NOT NULL CHECK (revision > 0),
                created_at text NOT NULL,
                updated_at text NOT NULL,
                writer_kind text NOT NULL CHECK (writer_kind IN ('owner', 'agent')),
                writer_session text,
                removed_at text,
                PRIMARY KEY (tenant, spec, id)
            )""",
            "CREATE INDEX documents_listing ON documents "
            "(tenant, spec, updated_at DESC, id) WHERE NOT removed",
        ),
    ),
)
DOCUMENT_SCHEMA_VERSION: Final = DOCUMENT_MIGRATIONS[-1][0]

_COLUMNS: Final = (
    "id, removed, title, text, summary, agent_writes, revision, created_at, updated_at, "
    "writer_kind, writer_session"
)
_SCOPE: Final = "tenant = %(tenant)s AND spec = %(spec)s"


def migrate_documents(pool: ConnectionPool[Any]) -> int:
    """Bring the document tables to ``DOCUMENT_SCHEMA_VERSION`` in one transaction under an
    advisory lock; returns the version the database is at."""
    with pool.connection() as conn, conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (DOCUMENT_MIGRATION_LOCK,))
        conn.execute(
            "CREATE TABLE IF NOT EXISTS document_schema_version ("
            "version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())"
        )
        row = conn.execute(
            "SELECT coalesce(max(version), 0) FROM document_schema_version"
        ).fetchone()
        current = int(row[0]) if row else 0
        if current > DOCUMENT_SCHEMA_VERSION:
            raise StoreError(
                f"the document tables are at schema version {current}, newer than this "
                f"runtime's {DOCUMENT_SCHEMA_VERSION}: upgrade specwire"
            )
        for version, statements in DOCUMENT_MIGRATIONS:
            if version <= current:
                continue
            for statement in statements:
                conn.execute(statement)
            conn.execute("INSERT INTO document_schema_version (version) VALUES (%s)", (version,))
            current = version
        return current


_migrated: weakref.WeakKeyDictionary[Any, int] = weakref.WeakKeyDictionary()
_migrated_lock = threading.Lock()


def _migrate_once(pool: ConnectionPool[Any]) -> None:
    """Once per pool: stores built per turn on a shared pool do not each take the lock."""
    with _migrated_lock:
        if pool not in _migrated:
            _migrated[pool] = migrate_documents(pool)


class PostgresDocumentStore:
    """Documents of ``(tenant, spec)`` on ``pool`` (the facts' shared pool: its owner closes
    it)."""

    where = "PostgreSQL"

    def __init__(
        self, pool: ConnectionPool[Any], *, tenant: str, spec: str, now: Clock = utc_now
    ) -> None:
        self._pool = pool
        self._scope = {"tenant": tenant, "spec": spec}
        self._now = now
        with _translated("migrate the document tables"):
            _migrate_once(pool)

    def close(self) -> None:
        return None

    # -- reads -------------------------------------------------------------------------------

    def get(self, document_id_: str) -> Document:
        identifier = document_id(document_id_)
        with self._transaction("read a document") as conn:
            current, removed = self._row(conn, identifier, lock=False)
        return rules.existing(identifier, current, removed)

    def page(self, after: tuple[str, str] | None, limit: int) -> DocumentPage:
        params: dict[str, Any] = {**self._scope, "limit": max(0, limit) + 1}
        where = f"{_SCOPE} AND NOT removed"
        if after is not None:
            where += " AND (updated_at < %(updated)s OR (updated_at = %(updated)s AND id > %(id)s))"
            params.update(updated=after[0], id=after[1])
        with self._transaction("list documents") as conn:
            rows = conn.execute(
                f"SELECT {_COLUMNS} FROM documents WHERE {where} "
                "ORDER BY updated_at DESC, id ASC LIMIT %(limit)s",
                params,
            ).fetchall()
        documents = [_document(row) for row in rows]
        shown = documents[: max(0, limit)]
        more = len(documents) > len(shown) and shown
        return DocumentPage(tuple(shown), rules.listing_key(shown[-1]) if more else None)

    # -- changes -----------------------------------------------------------------------------

    def create(
        self,
        document_id_: str,
        *,
        title: str,
        text: str = "",
        summary: str = "",
        frozen: bool = False,
        writer: Writer = OWNER,
    ) -> Document:
        import psycopg

        identifier = document_id(document_id_)
        try:
            with self._transaction("create a document") as conn:
                current, removed = self._row(conn, identifier, lock=True)
                new = rules.created(
                    identifier,
                    current is not None or removed,
                    removed,
                    title=title,
                    text=text,
                    summary=summary,
                    frozen=frozen,
                    writer=writer,
                    now=iso(self._now()),
                )
                conn.execute(
                    "INSERT INTO documents (tenant, spec, id, title, text, summary, agent_writes, "
                    "revision, created_at, updated_at, writer_kind, writer_session) VALUES "
                    "(%(tenant)s, %(spec)s, %(id)s, %(title)s, %(text)s, %(summary)s, "
                    "%(agent_writes)s, %(revision)s, %(created_at)s, %(updated_at)s, "
                    "%(writer_kind)s, %(writer_session)s)",
                    {**self._scope, **_params(new)},
                )
        except psycopg.errors.UniqueViolation:
            raise DocumentExists(identifier) from None
        return new

    def replace(
        self, document_id_: str, *, text: str, summary: str | None, if_match: str, writer: Writer
    ) -> Document:
        identifier = document_id(document_id_)
        with self._transaction("save a document") as conn:
            current, removed = self._row(conn, identifier, lock=True)
            new = rules.replaced(
                identifier,
                current,
                removed,
                text=text,
                summary=summary,
                if_match=if_match,
                writer=writer,
                now=iso(self._now()),
            )
            self._update(conn, new)
        return new

    def patch(
        self,
        document_id_: str,
        *,
        title: str | None = None,
        agent_writes: AgentWrites | None = None,
        if_match: str,
    ) -> Document:
        identifier = document_id(document_id_)
        with self._transaction("change a document") as conn:
            current, removed = self._row(conn, identifier, lock=True)
            new = rules.patched(
                identifier,
                current,
                removed,
                title=title,
                agent_writes=agent_writes,
                if_match=if_match,
                now=iso(self._now()),
            )
            self._update(conn, new)
        return new

    def remove(self, document_id_: str, *, if_match: str) -> None:
        identifier = document_id(document_id_)
        with self._transaction("remove a document") as conn:
            current, removed = self._row(conn, identifier, lock=True)
            rules.removable(identifier, current, removed, if_match=if_match)
            conn.execute(
                "UPDATE documents SET removed = true, title = '', text = '', summary = '', "
                f"removed_at = %(at)s WHERE {_SCOPE} AND id = %(id)s",
                {**self._scope, "id": identifier, "at": iso(self._now())},
            )

    # -- helpers -----------------------------------------------------------------------------

    def _row(
        self, conn: Connection[Any], identifier: str, *, lock: bool
    ) -> tuple[Document | None, bool]:
        row = conn.execute(
            f"SELECT {_COLUMNS} FROM documents WHERE {_SCOPE} AND id = %(id)s"
            + (" FOR UPDATE" if lock else ""),
            {**self._scope, "id": identifier},
        ).fetchone()
        if row is None:
            return None, False
        if row[1]:
            return None, True
        return _document(row), False

    def _update(self, conn: Connection[Any], document: Document) -> None:
        conn.execute(
            "UPDATE documents SET title = %(title)s, text = %(text)s, summary = %(summary)s, "
            "agent_writes = %(agent_writes)s, revision = %(revision)s, "
            "updated_at = %(updated_at)s, writer_kind = %(writer_kind)s, "
            f"writer_session = %(writer_session)s WHERE {_SCOPE} AND id = %(id)s",
            {**self._scope, **_params(document)},
        )

    @contextmanager
    def _transaction(self, what: str) -> Iterator[Connection[Any]]:
        with _translated(what), self._pool.connection() as conn, conn.transaction():
            conn.execute(
                "SELECT set_config('statement_timeout', %s, true)", (str(STATEMENT_TIMEOUT_MS),)
            )
            yield conn


@contextmanager
def _translated(what: str) -> Iterator[None]:
    """A database failure as one ``StoreError`` line (never the DSN or the statement)."""
    import psycopg
    from psycopg_pool import PoolTimeout

    try:
        yield
    except psycopg.errors.UniqueViolation:
        raise
    except (psycopg.Error, PoolTimeout) as exc:
        reason = type(exc).__name__
        raise StoreError(f"could not {what}: the document database failed ({reason})") from None


def _params(document: Document) -> dict[str, Any]:
    return {
        "id": document.id,
        "title": document.title,
        "text": document.text,
        "summary": document.summary,
        "agent_writes": document.agent_writes,
        "revision": int(document.revision),
        "created_at": document.created_at,
        "updated_at": document.updated_at,
        "writer_kind": document.writer.kind,
        "writer_session": document.writer.session_id,
    }


def _document(row: Any) -> Document:
    (
        identifier,
        _removed,
        title,
        text,
        summary,
        agent_writes,
        revision,
        created_at,
        updated_at,
        writer_kind,
        writer_session,
    ) = row
    return Document(
        id=identifier,
        title=title,
        text=text,
        summary=summary,
        agent_writes=agent_writes,
        revision=str(revision),
        created_at=created_at,
        updated_at=updated_at,
        writer=Writer(writer_kind, writer_session),
    )
