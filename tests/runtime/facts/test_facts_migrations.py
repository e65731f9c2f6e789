"""Schema migrations: a database written at version 1 (ASCII tokens) is re-tokenized on open."""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path

import pytest
from facts_support import START, FakeClock

from specwire.runtime.facts.model import to_ms
from specwire.runtime.facts.sql.schema import MIGRATIONS, SCHEMA_VERSION, migrate
from specwire.runtime.facts.store import FactStore


def v1_terms(text: str, tags: list[str]) -> str:
    """What version 1 indexed: lowercase, split on ``[^a-z0-9]+``."""
    return " ".join(t for t in re.split(r"[^a-z0-9]+", " ".join([text, *tags]).lower()) if t)


def create_v1(path: Path, facts: list[tuple[str, str, list[str]]]) -> sqlite3.Connection:
    """A database exactly as the version-1 runtime left it (facts written with v1 terms)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(str(path), isolation_level=None)
    conn.execute("PRAGMA journal_mode = WAL")
    assert migrate(conn, MIGRATIONS, target=1) == 0
    for fact_id, text, tags in facts:
        conn.execute(
            "INSERT INTO facts (id, text, norm_text, terms, tags, created_at) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            (fact_id, text, text.lower(), v1_terms(text, tags), json.dumps(tags), to_ms(START)),
        )
    return conn


TOKYO = "mem_00000000000000a1"
ZURICH = "mem_00000000000000a2"
GONE = "mem_00000000000000a3"
PLAIN = "mem_00000000000000a4"


@pytest.fixture
def v1_db(db_path: Path) -> Path:
    conn = create_v1(
        db_path,
        [
            (TOKYO, "本社は東京にあります", ["拠点"]),
            (ZURICH, "The team sits in Zürich", []),
            (GONE, "東京 office closed", []),
            (PLAIN, "lunch is at noon", ["food"]),
        ],
    )
    conn.execute(
        "INSERT INTO tombstones (kind, target, at, reason) VALUES ('forgotten', ?, ?, 'x')",
        (GONE, to_ms(START)),
    )
    assert conn.execute("PRAGMA user_version").fetchone()[0] == 1
    # The defect being migrated away: v1 indexed nothing for Japanese, fragments for "Zürich".
    found = conn.execute("SELECT rowid FROM facts_fts WHERE facts_fts MATCH '\"rich\"'").fetchall()
    assert found == [(2,)]
    conn.close()
    return db_path


def test_a_version_1_database_is_retokenized_on_open(v1_db: Path, clock: FakeClock) -> None:
    with FactStore.open(v1_db, now=clock) as store:
        assert store.schema_version == SCHEMA_VERSION == 6
        assert [h.fact.id for h in store.recall("東京")] == [TOKYO]  # GONE stays forgotten
        assert [h.fact.id for h in store.recall("拠点")] == [TOKYO]  # tags are re-indexed too
        assert [h.fact.id for h in store.recall("zürich")] == [ZURICH]
        assert store.recall("rich") == []
        assert [h.fact.id for h in store.recall("food noon")] == [PLAIN]
        statuses = {entry.fact.id: entry.status for entry in store.list_facts()}
        assert statuses == {TOKYO: "live", ZURICH: "live", GONE: "forgotten", PLAIN: "live"}
        # A new fact lands in the same index as the migrated ones.
        store.remember("東京 branch opens in May")
        assert len(store.recall("東京")) == 2


def test_the_migration_rewrites_terms_only_and_keeps_facts_immutable(v1_db: Path) -> None:
    FactStore.open(v1_db).close()
    conn = sqlite3.connect(str(v1_db), isolation_level=None)
    rows = dict(conn.execute("SELECT id, terms FROM facts").fetchall())
    assert rows[ZURICH] == "the team sits in zürich"
    assert rows[PLAIN] == "lunch is at noon food"
    assert "東京" in rows[TOKYO].split() and "拠点" in rows[TOKYO].split()
    indexed = conn.execute("SELECT count(*) FROM facts_fts").fetchone()[0]
    assert indexed == 3  # every fact without a tombstone, and only those
    with pytest.raises(sqlite3.IntegrityError, match="immutable"):
        conn.execute("UPDATE facts SET terms = 'x'")
    assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION


def test_a_failed_retokenize_leaves_version_1_intact(v1_db: Path) -> None:
    conn = sqlite3.connect(str(v1_db), isolation_level=None)

    def broken(c: sqlite3.Connection) -> None:
        MIGRATIONS[2](c)
        raise sqlite3.OperationalError("disk full")

    with pytest.raises(sqlite3.OperationalError, match="disk full"):
        migrate(conn, {**MIGRATIONS, 2: broken}, target=2)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == 1
    terms = conn.execute("SELECT terms FROM facts WHERE id = ?", (ZURICH,)).fetchone()[0]
    assert terms == "the team sits in z rich"
    conn.close()
    with FactStore.open(v1_db) as store:  # a later open still migrates cleanly
        assert [h.fact.id for h in store.recall("zürich")] == [ZURICH]
