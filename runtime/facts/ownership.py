"""Is the file at the facts path a fact store of ours? Decided before anything touches it.

A database this runtime creates is stamped with ``APPLICATION_ID`` (``PRAGMA application_id``)
before anything else is done to it, WAL included, so the id is always in the file's 100-byte
header (offset 68), which is read here through a descriptor opened with ``O_NOFOLLOW`` and
``O_NONBLOCK`` and checked to be a regular file: a FIFO or a symlink at the facts path is
refused at once, never handed to SQLite (whose open would hang on a FIFO).

Stores of earlier versions carry no id, but that version switched every store to WAL first
thing. So a file without an id is ours only when its header says WAL and a plain read of its
schema (a connection that changes no setting) finds our tables, or no table at all (an earlier
version was stopped while creating it); ``migrate`` then stamps the id. Anything else is
refused, naming the file, with its bytes untouched: another application's database in rollback
mode is never even opened by SQLite. (Reading a WAL file without an id means SQLite opens it;
its ``-wal``/``-shm`` files exist only while it is open.)
"""

from __future__ import annotations

import os
import sqlite3
import stat
from pathlib import Path
from typing import Literal

from specwire.runtime.core.errors import StoreError
from specwire.runtime.core.lazy_dataclass import lazy_dataclass
from specwire.runtime.fs.safe_open import open_regular_fd

APPLICATION_ID = int.from_bytes(b"spwf", "big")  # 0x73707766: "specwire facts"
OUR_TABLES = frozenset({"facts", "tombstones", "facts_fts"})
SQLITE_MAGIC = b"SQLite format 3\x00"
HEADER_BYTES = 100

Verdict = Literal["new", "ours", "legacy"]


@lazy_dataclass(frozen=True)
class Ownership:
    """Whether a database file is new, ours or a legacy one, and which file was checked."""

    verdict: Verdict
    identity: tuple[int, int]  # (st_dev, st_ino) of the file that was checked


def _foreign(path: Path, what: str) -> StoreError:
    return StoreError(
        f"refusing to open {path} as the fact store: {what}; it was left unchanged — move it "
        "away (or remove it) to let specwire create its own store there"
    )


def check_ownership(path: Path, *, max_version: int) -> Ownership:
    """The verdict on the file at ``path`` (which must exist); ``StoreError`` when it is not
    ours (``UnsafeFileError`` when it is not even a regular file)."""
    fd = open_regular_fd(path, label=f"the fact store {path}")
    try:
        info = os.fstat(fd)
        identity = (info.st_dev, info.st_ino)
        if info.st_size == 0:
            return Ownership("new", identity)
        header = os.pread(fd, HEADER_BYTES, 0)
    finally:
        os.close(fd)
    if len(header) < HEADER_BYTES or not header.startswith(SQLITE_MAGIC):
        raise _foreign(path, "it is not a SQLite database")
    application_id = int.from_bytes(header[68:72], "big", signed=True)
    if application_id == APPLICATION_ID:
        return Ownership("ours", identity)
    if application_id != 0:
        raise _foreign(
            path, f"it belongs to another application (application_id {application_id:#x})"
        )
    if header[18] != 2 or header[19] != 2:
        raise _foreign(path, "it is a SQLite database of another program (not in WAL mode)")
    _check_legacy_schema(path, max_version)
    return Ownership("legacy", identity)


def _check_legacy_schema(path: Path, max_version: int) -> None:
    """A store of an earlier version, or refuse. Reads only; changes no setting."""
    try:
        uri = f"{path.absolute().as_uri()}?mode=rw"  # never creates a file
        conn = sqlite3.connect(uri, uri=True, isolation_level=None)
    except sqlite3.Error as exc:
        raise StoreError(f"cannot open the fact store at {path}: {exc}") from exc
    try:
        application_id = conn.execute("PRAGMA application_id").fetchone()[0]
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master")}
    except sqlite3.Error as exc:
        raise _foreign(path, f"it cannot be read as a SQLite database ({exc})") from exc
    finally:
        conn.close()
    if application_id == APPLICATION_ID:
        return  # stamped meanwhile (the stamp was still in the WAL)
    if application_id != 0:
        raise _foreign(
            path, f"it belongs to another application (application_id {application_id:#x})"
        )
    if version == 0 and not tables:
        return  # an earlier version was stopped while creating it: nothing in it yet
    if version >= 1 and tables >= OUR_TABLES:
        return  # newer than ``max_version`` is refused by ``migrate`` with its own message
    shown = ", ".join(sorted(tables)[:6]) or "none"
    raise _foreign(
        path,
        f"it is not a specwire fact store (schema version {version}, tables: {shown}; "
        f"specwire writes versions 1–{max_version})",
    )


def claim_new(conn: sqlite3.Connection, path: Path) -> None:
    """Stamp a brand-new (empty) database as ours, before anything else changes it. Two
    processes creating the store at once both get here; the second finds the stamp."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        application_id = conn.execute("PRAGMA application_id").fetchone()[0]
        if application_id == 0:
            empty = conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0] == 0
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            if not empty or version != 0:
                raise _foreign(path, "something else wrote a database there meanwhile")
            conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
        elif application_id != APPLICATION_ID:
            raise _foreign(
                path, f"it belongs to another application (application_id {application_id:#x})"
            )
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise


def is_regular_identity(path: Path, identity: tuple[int, int]) -> bool:
    """Whether ``path`` still names the regular file that was checked."""
    try:
        info = os.stat(path, follow_symlinks=False)
    except OSError:
        return False
    return stat.S_ISREG(info.st_mode) and (info.st_dev, info.st_ino) == identity
