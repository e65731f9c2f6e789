"""Versioned migrations per component on a real PostgreSQL (pgserver): each version applied
once, processes starting together wait for each other, a newer database is refused."""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "conformance"))
from conformance_harness import PostgresServerForTests  # noqa: E402

from specwire.runtime.core.errors import StoreError  # noqa: E402
from specwire.runtime.pg.migrations import advisory_key, migrate, migrate_once  # noqa: E402
from specwire.runtime.pg.pool import open_pool  # noqa: E402

pytestmark = pytest.mark.postgres

V1 = (1, ("CREATE TABLE widgets (id text PRIMARY KEY)",))
V2 = (2, ("ALTER TABLE widgets ADD COLUMN size integer NOT NULL DEFAULT 0",))


@pytest.fixture
def pool() -> Iterator[Any]:
    uri = PostgresServerForTests.fresh_database()
    opened = open_pool(uri, max_size=6)
    yield opened
    opened.close()
    PostgresServerForTests.drop_database(uri)


def versions(pool: Any) -> list[int]:
    with pool.connection() as conn:
        rows = conn.execute("SELECT version FROM widgets_schema_version ORDER BY 1").fetchall()
    return [int(row[0]) for row in rows]


def test_each_version_is_applied_once_and_later_versions_apply_forward(pool: Any) -> None:
    assert migrate(pool, "widgets", (V1,)) == 1
    assert migrate(pool, "widgets", (V1,)) == 1
    assert migrate(pool, "widgets", (V1, V2)) == 2
    assert versions(pool) == [1, 2]
    with pool.connection() as conn:
        conn.execute("INSERT INTO widgets (id, size) VALUES ('a', 3)")


def test_processes_starting_together_apply_each_version_once(pool: Any) -> None:
    results: list[int] = []
    errors: list[BaseException] = []

    def start() -> None:
        try:
            results.append(migrate(pool, "widgets", (V1, V2)))
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=start) for _ in range(5)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert errors == []
    assert results == [2] * 5
    assert versions(pool) == [1, 2]


def test_a_database_newer_than_the_runtime_is_refused(pool: Any) -> None:
    migrate(pool, "widgets", (V1, V2))
    with pytest.raises(StoreError, match="newer than this runtime's 1: upgrade specwire"):
        migrate(pool, "widgets", (V1,))


def test_migrate_once_remembers_per_pool_and_component(pool: Any) -> None:
    assert migrate_once(pool, "widgets", (V1,)) == 1
    # A second call does not touch the database: a newer list is not applied on this pool.
    assert migrate_once(pool, "widgets", (V1, V2)) == 1
    assert versions(pool) == [1]


def test_bad_component_names_and_version_lists_are_refused(pool: Any) -> None:
    with pytest.raises(ValueError, match="lowercase identifier"):
        migrate(pool, "Widgets; DROP", (V1,))
    with pytest.raises(ValueError, match="1..n in order"):
        migrate(pool, "widgets", (V2,))


def test_advisory_keys_are_stable_signed_64_bit() -> None:
    key = advisory_key("specwire.migrate.continuity")
    assert key == advisory_key("specwire.migrate.continuity")
    assert key != advisory_key("specwire.migrate.sessions")
    assert -(2**63) <= key < 2**63
