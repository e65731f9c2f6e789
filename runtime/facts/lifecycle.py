"""``FactFile``: the fact store's SQLite file, from lazy creation to close, and its transactions.

Durability: ``journal_mode=WAL`` with ``synchronous=FULL``. Writes are rare (a tool call or an
end-of-turn capture) and each one is acknowledged to the model ("remembered (mem_…)"), so the
WAL is fsynced at every commit: an acknowledged fact survives a power loss, not only a process
crash (``NORMAL`` would only guarantee the latter). The cost is one fsync per write.

Ownership: the file at the path is checked to be a regular file and a fact store of ours
(``runtime.facts.ownership``: SQLite's ``application_id``, or the schema of an earlier version)
before SQLite opens it and before any setting (WAL…) changes; anything else is refused with its
bytes untouched. A new file is stamped with the id before it is switched to WAL.

Lazy creation: opening a store whose file does not exist creates nothing (so ``agent.py --help``
or a session that never writes leaves no trace). Reads of a missing database answer as an empty
store (``reading`` yields None), writes that only change existing facts (``updating``) find
nothing to change, and the first write that adds a fact (``writing``) creates the parent
directories (0700) and the file (0600). A file created meanwhile by another process is picked up
by the next read or write.

Concurrency: every write is one ``BEGIN IMMEDIATE`` transaction, so a writer takes the write lock
before it reads what it is about to change, and waits up to ``BUSY_TIMEOUT_MS`` for another
process instead of failing. Reads are single statements (a consistent WAL snapshot). Within a
process one connection is shared by threads under ``lock``. A transaction on a file that was
removed or replaced since it was opened is refused (writes to an unlinked SQLite file succeed
and vanish).
"""

from __future__ import annotations

import os
import sqlite3
import stat
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from types import TracebackType

from specwire.runtime.core.errors import StoreError
from specwire.runtime.facts.ownership import check_ownership, claim_new, is_regular_identity
from specwire.runtime.facts.sql.schema import SCHEMA_VERSION, migrate

BUSY_TIMEOUT_MS = 5000
SETUP_RETRY_S = 0.01


class FactFile:
    """The one connection to the fact store's file (opened on first use) and its lock."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fspath = os.fspath(path)
        self.lock = threading.RLock()
        self._conn: sqlite3.Connection | None = None
        # (st_dev, st_ino) of the file the connection opened; None until connected.
        self._identity: tuple[int, int] | None = None
        self.closed = False

    def open(self) -> None:
        """Connect and migrate now when the file exists; otherwise create nothing, and fail
        early when the file could never be created (an ancestor is a file or not writable)."""
        if file_exists(self.path):
            with self.lock:
                self._connection(create=False)
            return
        problem = creation_problem(self.path)
        if problem is not None:
            raise StoreError(f"cannot create the fact store at {self.path}: {problem}")

    def close(self) -> None:
        with self.lock:
            self.closed = True
            conn, self._conn = self._conn, None
            if conn is not None:
                with suppress(sqlite3.Error):
                    conn.execute("PRAGMA optimize")
                conn.close()

    def replaced(self) -> bool:
        """Whether the file this connection opened was removed or replaced at the path since
        (False while nothing is connected): such a connection must not be reused."""
        # Read without the lock, which a running query may hold for milliseconds: both
        # attributes are set once, when connecting, to the file that connection opened.
        identity = self._identity if self._conn is not None else None
        return identity is not None and _identity_problem(self.path, identity) is not None

    @contextmanager
    def reading(self, action: str) -> Iterator[sqlite3.Connection | None]:
        """A read; None when no database file exists (the caller answers as an empty store)."""
        with self.lock:
            conn = self._connection(create=False)
            try:
                yield conn
            except sqlite3.Error as exc:
                raise store_error(action, exc) from exc

    def writing(self, action: str) -> Transaction:
        """A write that adds facts: creates the database file if it does not exist yet."""
        return Transaction(self, action)

    @contextmanager
    def updating(self, action: str) -> Iterator[sqlite3.Connection | None]:
        """A write that only changes existing facts: None, creating nothing, without a file."""
        with self.lock:
            if self._connection(create=False) is None:
                yield None
                return
            with Transaction(self, action) as tx:
                yield tx

    def health_problem(self, *, timeout_s: float) -> str | None:
        """Why the file cannot serve right now, or None. Never blocks past ``timeout_s``.

        A file that does not exist yet is healthy when it could be created.
        """
        if not self.lock.acquire(timeout=timeout_s):
            return "health check timeout"
        try:
            if self.closed:
                return "the fact store is closed"
            conn = self._conn
            if conn is None and not file_exists(self.path):
                problem = creation_problem(self.path)
                return None if problem is None else f"the fact store cannot be created: {problem}"
            if conn is not None and self._identity is not None:
                problem = _identity_problem(self.path, self._identity)
                if problem is not None:
                    return problem
            if not os.access(self.path.parent, os.W_OK | os.X_OK):
                return "the fact store directory is not writable"
            if not os.access(self.path, os.R_OK | os.W_OK):
                return "the fact store file is not readable and writable"
            if conn is not None:
                try:
                    conn.execute("SELECT count(*) FROM facts WHERE seq < 0").fetchone()
                except sqlite3.Error as exc:
                    return f"the fact store cannot be read: {exc}"
            return None
        finally:
            self.lock.release()

    def _connection(self, *, create: bool) -> sqlite3.Connection | None:
        """The open connection (call under the lock), connecting on first use.

        Without ``create``, a missing database file gives None and nothing is created.
        """
        if self.closed:
            raise StoreError(f"the fact store is closed ({self.path.name})")
        if self._conn is not None:
            return self._conn
        if not create and not file_exists(self.path):
            return None
        conn = _connect(self.path, create=create)
        try:
            identity = _identity(self.path)
        except OSError as exc:
            conn.close()
            raise StoreError(f"cannot open the fact store at {self.path}: {exc.strerror}") from exc
        self._conn, self._identity = conn, identity
        return conn

    def connection(self) -> sqlite3.Connection:
        """The open connection, connecting (and creating the file) on first use. Call under
        the lock."""
        conn = self._connection(create=True)
        assert conn is not None
        return conn

    def check_identity(self, action: str) -> None:
        """Refuse a transaction on a file removed or replaced since it was opened."""
        identity = self._identity
        if identity is None:
            return
        try:
            info = os.stat(self._fspath)
        except OSError:
            info = None  # explained below
        if info is not None and (info.st_dev, info.st_ino) == identity:
            return  # every write: one stat, nothing else
        problem = _identity_problem(self.path, identity)
        if problem is not None:
            raise StoreError(f"cannot {action}: {problem}; reopen the store")


class Transaction:
    """One ``BEGIN IMMEDIATE`` transaction under the file's lock (connecting, and creating the
    file, on first use), committed when the block ends and rolled back when it raises; refused
    when the file was removed or replaced since it was opened.

    A class, not a ``@contextmanager`` generator: every write enters one, and this costs a
    third of the two nested generator blocks it replaces.
    """

    __slots__ = ("_action", "_conn", "_file")

    def __init__(self, file: FactFile, action: str) -> None:
        self._file = file
        self._action = action
        self._conn: sqlite3.Connection | None = None

    def __enter__(self) -> sqlite3.Connection:
        file = self._file
        file.lock.acquire()
        try:
            conn = file._conn
            if conn is None or file.closed:
                conn = file.connection()
            file.check_identity(self._action)
            try:
                conn.execute("BEGIN IMMEDIATE")
            except sqlite3.Error as exc:
                raise store_error(self._action, exc) from exc
        except BaseException:
            file.lock.release()
            raise
        self._conn = conn
        return conn

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        conn, self._conn = self._conn, None
        assert conn is not None
        try:
            if exc is None:
                try:
                    conn.execute("COMMIT")
                except sqlite3.Error as error:
                    _rollback(conn)
                    raise store_error(self._action, error) from error
                return
            _rollback(conn)
            if isinstance(exc, sqlite3.Error):
                raise store_error(self._action, exc) from exc
        finally:
            self._file.lock.release()


def file_exists(path: Path) -> bool:
    """Whether something is at ``path``; an error other than "missing" counts as yes, so that
    connecting reports it."""
    try:
        os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        return False
    except OSError:
        return True
    return True


def creation_problem(path: Path) -> str | None:
    """Why the file at ``path`` could not be created now, or None. Creates nothing.

    The nearest existing ancestor must be a directory this process may write into.
    """
    for ancestor in (path.parent, *path.parent.parents):
        try:
            mode = os.stat(ancestor).st_mode
        except (FileNotFoundError, NotADirectoryError):
            continue
        except OSError as exc:
            return f"{ancestor} cannot be checked ({exc.strerror})"
        if not stat.S_ISDIR(mode):
            return f"{ancestor} is not a directory"
        if not os.access(ancestor, os.W_OK | os.X_OK):
            return f"{ancestor} is not writable"
        return None
    return None


def store_error(action: str, exc: sqlite3.Error) -> StoreError:
    """The refusal for a failed statement; "busy" says another process holds the lock."""
    if _is_busy(exc):
        return StoreError(
            f"cannot {action}: the fact store is busy (another process holds its write lock); "
            "try again"
        )
    return StoreError(f"cannot {action}: {exc}")


def _connect(path: Path, *, create: bool) -> sqlite3.Connection:
    """Connect (creating the file, mode 0600, and its parents when ``create``) and migrate.

    Setting up a brand-new file races with other processes doing the same: switching to WAL
    needs an exclusive lock, and SQLite answers "database is locked" at once, without waiting,
    when waiting could deadlock. Such a setup is retried until ``BUSY_TIMEOUT_MS`` has passed.
    """
    if create:
        try:
            path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            _create_private(path)
        except OSError as exc:
            raise StoreError(f"cannot create the fact store at {path}: {exc.strerror}") from exc
    deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
    while True:
        try:
            return _connect_once(path)
        except sqlite3.OperationalError as exc:
            if not _is_busy(exc) or time.monotonic() >= deadline:
                raise StoreError(f"cannot open the fact store at {path}: {exc}") from exc
        except sqlite3.Error as exc:
            raise StoreError(f"cannot open the fact store at {path}: {exc}") from exc
        time.sleep(SETUP_RETRY_S)


def _connect_once(path: Path) -> sqlite3.Connection:
    # Whose file it is, decided before SQLite opens it and before any setting changes.
    ownership = check_ownership(path, max_version=SCHEMA_VERSION)
    conn = sqlite3.connect(
        str(path),
        timeout=BUSY_TIMEOUT_MS / 1000,
        isolation_level=None,
        check_same_thread=False,
    )
    try:
        if not is_regular_identity(path, ownership.identity):
            raise StoreError(f"the fact store at {path} was replaced while it was being opened")
        conn.row_factory = sqlite3.Row
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        if ownership.verdict == "new":
            claim_new(conn, path)
        mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
        if str(mode).lower() != "wal":
            raise StoreError(f"the fact store at {path} cannot use WAL (got {mode})")
        conn.execute("PRAGMA synchronous = FULL")
        conn.execute("PRAGMA foreign_keys = ON")
        migrate(conn)
    except BaseException:
        conn.close()
        raise
    return conn


def _is_busy(exc: sqlite3.Error) -> bool:
    message = str(exc)
    return "locked" in message or "busy" in message


def _create_private(path: Path) -> None:
    """Create the database file with mode 0600 if it does not exist (never widen a mode)."""
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return
    try:
        os.fchmod(fd, 0o600)
    finally:
        os.close(fd)


def _identity(path: Path) -> tuple[int, int]:
    info = os.stat(path)
    return info.st_dev, info.st_ino


def _identity_problem(path: Path, identity: tuple[int, int]) -> str | None:
    """Writes to an unlinked SQLite file succeed and vanish; refuse them instead."""
    try:
        current = _identity(path)
    except FileNotFoundError:
        return "the fact store file was removed while open"
    except OSError as exc:
        return f"the fact store file cannot be checked ({exc.strerror})"
    if current != identity:
        return "the fact store file was replaced while open"
    return None


def _rollback(conn: sqlite3.Connection) -> None:
    if conn.in_transaction:
        with suppress(sqlite3.Error):
            conn.execute("ROLLBACK")
