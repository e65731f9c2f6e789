"""Versioned forward migrations, one history per component (``facts`` keeps its own table
``schema_version`` from before this module; documents ``document_schema_version``).

A component is a set of tables one tier owns (``continuity``, ``session_logs``, ...). Its
migrations are a tuple of ``(version, statements)``, versions increasing from 1, never edited
once released: a change is a new version. ``migrate_once`` applies what a database lacks, in one
transaction under an advisory lock of the component's own (processes starting together wait for
each other; each version is applied once), and remembers per pool that it did.
"""

from __future__ import annotations

import hashlib
import re
import threading
import weakref
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from specwire.runtime.core.errors import StoreError
from specwire.runtime.pg.pool import translated

if TYPE_CHECKING:
    from psycopg_pool import ConnectionPool

Migrations = Sequence[tuple[int, Sequence[str]]]

_COMPONENT_RE = re.compile(r"[a-z][a-z0-9_]{0,40}")


def advisory_key(name: str) -> int:
    """A stable signed 64-bit advisory lock key for ``name`` (any text)."""
    digest = hashlib.blake2b(name.encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


def _check(component: str, migrations: Migrations) -> int:
    if not _COMPONENT_RE.fullmatch(component):
        raise ValueError(f"component name {component!r} is not a lowercase identifier")
    versions = [version for version, _ in migrations]
    if versions != list(range(1, len(versions) + 1)):
        raise ValueError(f"{component}: migration versions must be 1..n in order")
    return len(versions)


def migrate(pool: ConnectionPool[Any], component: str, migrations: Migrations) -> int:
    """Bring ``component``'s tables to its newest version; returns the version the database is
    at. A database newer than this runtime is refused (``StoreError``)."""
    newest = _check(component, migrations)
    table = f"{component}_schema_version"
    with (
        translated(f"migrate the {component} tables"),
        pool.connection() as conn,
        conn.transaction(),
    ):
        conn.execute(
            "SELECT pg_advisory_xact_lock(%s)", (advisory_key(f"specwire.migrate.{component}"),)
        )
        conn.execute(
            f"CREATE TABLE IF NOT EXISTS {table} ("
            "version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())"
        )
        row = conn.execute(f"SELECT coalesce(max(version), 0) FROM {table}").fetchone()
        current = int(row[0]) if row else 0
        if current > newest:
            raise StoreError(
                f"the {component} tables are at schema version {current}, newer than this "
                f"runtime's {newest}: upgrade specwire"
            )
        for version, statements in migrations:
            if version <= current:
                continue
            for statement in statements:
                conn.execute(statement)
            conn.execute(f"INSERT INTO {table} (version) VALUES (%s)", (version,))
            current = version
        return current


_migrated: weakref.WeakKeyDictionary[Any, dict[str, int]] = weakref.WeakKeyDictionary()
_migrated_lock = threading.Lock()


def migrate_once(pool: ConnectionPool[Any], component: str, migrations: Migrations) -> int:
    """``migrate`` once per pool and component: stores built per turn on a shared pool do not
    each take the lock."""
    with _migrated_lock:
        done = _migrated.setdefault(pool, {})
        if component not in done:
            done[component] = migrate(pool, component, migrations)
        return done[component]
