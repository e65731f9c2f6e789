"""The fact store opens nothing foreign: it checks the file is ours before changing anything.

A database this runtime creates carries ``APPLICATION_ID``; one an earlier version created (no
id, WAL, our schema) still opens and is stamped; anything else is refused with its bytes, its
journal mode and the absence of ``-wal``/``-shm`` files unchanged.
"""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path

import pytest
from facts_support import FakeClock

from specwire.runtime.core.errors import StoreError, UnsafeFileError
from specwire.runtime.facts.ownership import APPLICATION_ID
from specwire.runtime.facts.sql.schema import MIGRATIONS, SCHEMA_VERSION, migrate
from specwire.runtime.facts.store import FactStore


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def siblings(path: Path) -> list[str]:
    return sorted(p.name for p in path.parent.iterdir())


def header_application_id(path: Path) -> int:
    return int.from_bytes(path.read_bytes()[68:72], "big")


def foreign_db(path: Path, *, journal: str = "delete", application_id: int = 0) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(str(path), isolation_level=None)
    conn.execute(f"PRAGMA journal_mode = {journal}")
    if application_id:
        conn.execute(f"PRAGMA application_id = {application_id}")
    conn.execute("CREATE TABLE invoices (id INTEGER PRIMARY KEY, total REAL)")
    conn.execute("INSERT INTO invoices (total) VALUES (12.5), (99.0)")
    conn.close()


def journal_mode(path: Path) -> str:
    conn = sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True)
    try:
        return str(conn.execute("PRAGMA journal_mode").fetchone()[0])
    finally:
        conn.close()


def assert_refused_untouched(path: Path, clock: FakeClock, message: str) -> None:
    before, files = digest(path), siblings(path)
    with pytest.raises(StoreError, match=message) as caught:
        FactStore.open(path, now=clock)
    assert str(path) in str(caught.value)
    assert "it was left unchanged" in str(caught.value)
    assert digest(path) == before
    assert siblings(path) == files  # no -wal, no -shm, no journal appeared


def test_another_programs_database_is_refused_before_it_is_switched_to_wal(
    db_path: Path, clock: FakeClock
) -> None:
    foreign_db(db_path)
    assert_refused_untouched(db_path, clock, "a SQLite database of another program")
    assert journal_mode(db_path) == "delete"
    assert siblings(db_path) == [db_path.name]


def test_a_database_with_another_application_id_is_refused(db_path: Path, clock: FakeClock) -> None:
    foreign_db(db_path, journal="wal", application_id=0x0F0F0F0F)
    assert_refused_untouched(db_path, clock, r"another application \(application_id 0xf0f0f0f\)")


def test_a_wal_database_without_our_schema_is_refused(db_path: Path, clock: FakeClock) -> None:
    foreign_db(db_path, journal="wal")
    assert siblings(db_path) == [db_path.name]
    assert_refused_untouched(db_path, clock, r"not a specwire fact store \(schema version 0")


def test_a_file_that_is_not_sqlite_is_refused(db_path: Path, clock: FakeClock) -> None:
    db_path.parent.mkdir(parents=True)
    db_path.write_text("not a database at all\n" * 20, encoding="utf-8")
    assert_refused_untouched(db_path, clock, "it is not a SQLite database")


def test_a_symlink_at_the_facts_path_is_refused(
    tmp_path: Path, db_path: Path, clock: FakeClock
) -> None:
    elsewhere = tmp_path / "elsewhere.sqlite3"
    with FactStore.open(elsewhere, now=clock) as real:
        real.remember("kept where it is")
    db_path.parent.mkdir(parents=True)
    db_path.symlink_to(elsewhere)
    before = digest(elsewhere)
    with pytest.raises(UnsafeFileError, match="is a symbolic link"):
        FactStore.open(db_path, now=clock)
    assert digest(elsewhere) == before


def test_a_new_store_is_stamped_as_ours_in_its_header(db_path: Path, clock: FakeClock) -> None:
    with FactStore.open(db_path, now=clock) as store:
        store.remember("the billing plan is Enterprise")
    assert header_application_id(db_path) == APPLICATION_ID
    with FactStore.open(db_path, now=clock) as again:
        assert [f.fact.text for f in again.list_facts()] == ["the billing plan is Enterprise"]


def test_an_empty_file_at_the_path_becomes_a_store(db_path: Path, clock: FakeClock) -> None:
    db_path.parent.mkdir(parents=True)
    db_path.touch()
    with FactStore.open(db_path, now=clock) as store:
        store.remember("fresh")
    assert header_application_id(db_path) == APPLICATION_ID


def legacy_store(path: Path) -> None:
    """A store exactly as earlier versions left it: WAL, our schema, no application id."""
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(str(path), isolation_level=None)
    conn.execute("PRAGMA journal_mode = WAL")
    migrate(conn, MIGRATIONS, SCHEMA_VERSION)
    conn.execute("PRAGMA application_id = 0")  # earlier versions never set one
    conn.execute(
        "INSERT INTO facts (id, text, norm_text, terms, created_at) "
        "VALUES ('mem_00000000000000b1', 'kept from before', 'kept from before', "
        "'kept from before', 1)"
    )
    conn.close()


def test_a_store_of_an_earlier_version_opens_and_is_stamped(
    db_path: Path, clock: FakeClock
) -> None:
    legacy_store(db_path)
    assert header_application_id(db_path) == 0
    with FactStore.open(db_path, now=clock) as store:
        assert [f.fact.text for f in store.list_facts()] == ["kept from before"]
        store.remember("added now")
    assert header_application_id(db_path) == APPLICATION_ID


def test_a_store_an_earlier_version_left_half_created_opens(
    db_path: Path, clock: FakeClock
) -> None:
    db_path.parent.mkdir(parents=True)
    conn = sqlite3.connect(str(db_path), isolation_level=None)
    conn.execute("PRAGMA journal_mode = WAL")  # the first thing earlier versions did
    conn.close()
    with FactStore.open(db_path, now=clock) as store:
        store.remember("first fact")
        assert store.schema_version == SCHEMA_VERSION
