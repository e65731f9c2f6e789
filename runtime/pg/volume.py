"""``PostgresVolume``: the ``DocumentVolume`` of one tenant's spec in PostgreSQL.

One row per document in ``state_documents``: ``(tenant, spec, path)`` → ``body``, where
``path`` is the document's path relative to the store root, spelled as in the file layout
(``state/<spec>/plans/plan-0001-x.md``, ``wiki/<spec>/articles/<slug>.md``), and ``body`` its
exact text, so ``export`` writes the same bytes the file backend would have. Every write takes
a new ``revision`` from one sequence: a folder's largest revision and its document count change
with every write below it (the wiki's snapshot cache compares them).

``locked`` opens one transaction and takes a transaction-scoped advisory lock keyed by
(tenant, spec, lock path): mutations of one spec's plans by workers on any host serialize, and
the reads and writes inside run in that transaction (a mutation that fails writes nothing;
the lock goes with the transaction, also when the worker dies). A second lock taken inside
(another ``.lock``) joins the same transaction. Reads outside a lock see committed rows only.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from specwire.runtime.core.clock import Clock
from specwire.runtime.core.errors import LockTimeoutError, StoreError, TenancyError
from specwire.runtime.pg.migrations import Migrations, advisory_key, migrate_once
from specwire.runtime.pg.pool import translated

if TYPE_CHECKING:
    from psycopg import Connection
    from psycopg_pool import ConnectionPool

COMPONENT = "state_documents"
MIGRATIONS: Migrations = (
    (
        1,
        (
            "CREATE SEQUENCE IF NOT EXISTS state_document_revisions",
            "CREATE TABLE IF NOT EXISTS state_documents ("
            " tenant text NOT NULL,"
            " spec text NOT NULL,"
            # C collation: a folder's documents are one range of the primary key.
            ' path text COLLATE "C" NOT NULL,'
            " body text NOT NULL,"
            " revision bigint NOT NULL DEFAULT nextval('state_document_revisions'),"
            " updated_at timestamptz NOT NULL DEFAULT now(),"
            " PRIMARY KEY (tenant, spec, path))",
        ),
    ),
)


class PostgresVolume:
    on_files = False

    def __init__(self, pool: ConnectionPool[Any], root: Path, *, tenant: str, spec: str) -> None:
        migrate_once(pool, COMPONENT, MIGRATIONS)
        self._pool = pool
        self.root = root
        self.tenant = tenant
        self.spec = spec
        self._local = threading.local()

    @property
    def where(self) -> str:
        return f"PostgreSQL ({COMPONENT}, {self.tenant}/{self.spec})"

    # ── paths ───────────────────────────────────────────────────────────────────────────────

    def key(self, path: Path) -> str:
        """``path`` relative to the root, as a slash-separated key ("" for the root)."""
        spelled = Path(os.path.normpath(path.absolute()))
        for base in (Path(os.path.normpath(self.root.absolute())), self.root.resolve()):
            if spelled.is_relative_to(base):
                relative = spelled.relative_to(base).as_posix()
                return "" if relative == "." else relative
        raise TenancyError(f"cross-tenant access denied: {spelled} is outside {self.root}")

    def path(self, key: str) -> Path:
        return self.root / key

    # ── connections ─────────────────────────────────────────────────────────────────────────

    @contextlib.contextmanager
    def _connection(self, what: str) -> Iterator[Connection[Any]]:
        held: Connection[Any] | None = getattr(self._local, "conn", None)
        if held is not None:
            with translated(what):
                yield held
            return
        with translated(what), self._pool.connection() as conn:
            yield conn

    def _scope(self) -> tuple[str, str]:
        return (self.tenant, self.spec)

    def _below(self, prefix: str) -> tuple[str, tuple[Any, ...]]:
        """A WHERE clause for every document below ``prefix`` (every one for the root)."""
        if not prefix:
            return "tenant = %s AND spec = %s", self._scope()
        return (
            "tenant = %s AND spec = %s AND path > %s AND path < %s",
            (*self._scope(), prefix + "/", prefix + "0"),  # "0" follows "/"
        )

    # ── documents ───────────────────────────────────────────────────────────────────────────

    def read(self, path: Path) -> str | None:
        key = self.key(path)
        with self._connection("read a state document") as conn:
            row = conn.execute(
                "SELECT body FROM state_documents WHERE tenant = %s AND spec = %s AND path = %s",
                (*self._scope(), key),
            ).fetchone()
        if row is None:
            return None
        text: str = row[0]
        return text.replace("\r\n", "\n").replace("\r", "\n")  # as a file read in text mode

    def write(self, path: Path, text: str) -> None:
        key = self.key(path)
        if not key:
            raise StoreError("the store's root is not a document")
        if "\x00" in text:
            raise StoreError(f"{key}: a document cannot hold a NUL character; nothing was written")
        if self.is_dir(path):
            raise StoreError(f"{key} is a folder, not a document; nothing was written")
        with self._connection("write a state document") as conn:
            conn.execute(
                "INSERT INTO state_documents (tenant, spec, path, body) VALUES (%s, %s, %s, %s) "
                "ON CONFLICT (tenant, spec, path) DO UPDATE SET body = EXCLUDED.body, "
                "revision = nextval('state_document_revisions'), updated_at = now()",
                (*self._scope(), key, text),
            )

    def names(self, directory: Path) -> list[str]:
        prefix = self.key(directory)
        where, args = self._below(prefix)
        start = len(prefix) + 2 if prefix else 1
        with self._connection("list state documents") as conn:
            rows = conn.execute(
                f"SELECT DISTINCT split_part(substr(path, %s), '/', 1) FROM state_documents "
                f"WHERE {where}",
                (start, *args),
            ).fetchall()
        return sorted(str(row[0]) for row in rows)

    def is_dir(self, path: Path) -> bool:
        where, args = self._below(self.key(path))
        with self._connection("list state documents") as conn:
            row = conn.execute(
                f"SELECT EXISTS (SELECT 1 FROM state_documents WHERE {where})", args
            ).fetchone()
        return bool(row and row[0])

    def exists(self, path: Path) -> bool:
        return self.read(path) is not None or self.is_dir(path)

    def documents(self, directory: Path) -> list[Path]:
        where, args = self._below(self.key(directory))
        with self._connection("list state documents") as conn:
            rows = conn.execute(
                f"SELECT path FROM state_documents WHERE {where} ORDER BY path", args
            ).fetchall()
        return [self.path(str(row[0])) for row in rows]

    def texts(self, directory: Path) -> list[tuple[str, str, int]]:
        """``(key, exact text, revision)`` of every document below ``directory``."""
        where, args = self._below(self.key(directory))
        with self._connection("read state documents") as conn:
            rows = conn.execute(
                f"SELECT path, body, revision FROM state_documents WHERE {where} ORDER BY path",
                args,
            ).fetchall()
        return [(str(r[0]), str(r[1]), int(r[2])) for r in rows]

    def stamp(self, directory: Path) -> tuple[int, int] | None:
        """(document count, newest revision) below ``directory``; None when it is empty."""
        where, args = self._below(self.key(directory))
        with self._connection("list state documents") as conn:
            row = conn.execute(
                f"SELECT count(*), max(revision) FROM state_documents WHERE {where}", args
            ).fetchone()
        if row is None or not row[0]:
            return None
        return (int(row[0]), int(row[1]))

    def move(self, source: Path, destination: Path) -> None:
        src, dst = self.key(source), self.key(destination)
        if not src or not dst:
            raise StoreError("the store's root cannot be moved")
        where, args = self._below(src)
        with self._connection("move state documents") as conn, conn.transaction():
            conn.execute(
                "UPDATE state_documents SET path = %s || substr(path, %s), "
                "revision = nextval('state_document_revisions'), updated_at = now() "
                f"WHERE (tenant = %s AND spec = %s AND path = %s) OR ({where})",
                (dst, len(src) + 1, *self._scope(), src, *args),
            )

    def remove(self, path: Path) -> bool:
        key = self.key(path)
        where, args = self._below(key)
        with self._connection("remove state documents") as conn:
            cursor = conn.execute(
                "DELETE FROM state_documents "
                f"WHERE (tenant = %s AND spec = %s AND path = %s) OR ({where})",
                (*self._scope(), key, *args),
            )
            return cursor.rowcount > 0

    def write_many(self, documents: Sequence[tuple[str, str]]) -> int:
        """Insert ``(key, text)`` documents that are not there yet (one transaction); how many
        were inserted (``codegen memory migrate``: a second run copies nothing)."""
        inserted = 0
        with self._connection("write state documents") as conn, conn.transaction():
            for key, text in documents:
                cursor = conn.execute(
                    "INSERT INTO state_documents (tenant, spec, path, body) "
                    "VALUES (%s, %s, %s, %s) ON CONFLICT (tenant, spec, path) DO NOTHING",
                    (*self._scope(), key, text),
                )
                inserted += cursor.rowcount
        return inserted

    # ── locks ───────────────────────────────────────────────────────────────────────────────

    @contextlib.contextmanager
    def locked(
        self, lock: Path, *, wait_s: float, what: str, now: Clock | None = None
    ) -> Iterator[None]:
        key = advisory_key(f"specwire.state:{self.tenant}:{self.spec}:{self.key(lock)}")
        held: Connection[Any] | None = getattr(self._local, "conn", None)
        if held is not None:  # another lock inside a mutation: the same transaction
            self._acquire(held, key, wait_s, what)
            yield
            return
        with translated(f"lock the {what}"), self._pool.connection() as conn:
            self._acquire(conn, key, wait_s, what)
            self._local.conn = conn
            try:
                yield
            finally:
                self._local.conn = None

    def _acquire(self, conn: Connection[Any], key: int, wait_s: float, what: str) -> None:
        import psycopg

        if wait_s <= 0:
            row = conn.execute("SELECT pg_try_advisory_xact_lock(%s)", (key,)).fetchone()
            if not (row and row[0]):
                raise LockTimeoutError(f"{what} is locked by another writer — retry shortly")
            return
        conn.execute(f"SET LOCAL lock_timeout = {max(1, int(wait_s * 1000))}")
        try:
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (key,))
        except psycopg.errors.LockNotAvailable:
            raise LockTimeoutError(
                f"{what} is locked by another writer; gave up after {wait_s:g}s — retry shortly"
            ) from None

    def revisions(self, directory: Path) -> dict[str, tuple[int, int]]:
        """``{name: (revision, size in bytes)}`` of the documents directly in ``directory``."""
        prefix = self.key(directory)
        where, args = self._below(prefix)
        with self._connection("list state documents") as conn:
            rows = conn.execute(
                f"SELECT substr(path, %s), revision, octet_length(body) FROM state_documents "
                f"WHERE {where} AND strpos(substr(path, %s), '/') = 0",
                (len(prefix) + 2, *args, len(prefix) + 2),
            ).fetchall()
        return {str(r[0]): (int(r[1]), int(r[2])) for r in rows}
