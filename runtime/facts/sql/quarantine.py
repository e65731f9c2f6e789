"""SQL of the ``quarantine`` table: writes the injection scanner flagged, held apart from facts.

Like ``queries``, every function takes an open connection and runs inside the caller's
transaction. Nothing that ranks or embeds facts reads this table: a quarantined text can reach a
prompt only after the owner releases it, which moves it into ``facts`` as an ordinary write.
"""

from __future__ import annotations

import json
import sqlite3
from typing import Any, Literal

from specwire.runtime.core.ids import new_memory_id
from specwire.runtime.facts.model import Fact, Provenance, QuarantinedFact, from_ms
from specwire.runtime.facts.sql.queries import scope_of
from specwire.runtime.facts.validation import NewFact

_COLUMNS = (
    "id, text, tags, created_at, ttl_ms, session_id, evidence, rule, found_on, "
    "scope, subject, fact_key, tier"
)
_MARKS = ", ".join("?" * 13)
_INSERT = f"INSERT INTO quarantine ({_COLUMNS}) VALUES ({_MARKS})"


def hold(
    conn: sqlite3.Connection, new: NewFact, rule: str, now: int, *, fact_id: str | None = None
) -> Fact:
    """Hold a flagged write; returns it as a ``Fact`` marked ``quarantined`` (not stored as one)."""
    fact_id = fact_id or _free_id(conn)
    conn.execute(
        _INSERT,
        (
            fact_id,
            new.text,
            json.dumps(list(new.tags), ensure_ascii=False),
            now,
            new.ttl_ms,
            new.provenance.session_id,
            json.dumps(list(new.provenance.evidence), ensure_ascii=False),
            rule,
            "write",
            new.scope.scope,
            new.scope.subject,
            new.key,
            new.tier,
        ),
    )
    return Fact(
        id=fact_id,
        text=new.text,
        tags=new.tags,
        created_at=from_ms(now),
        expires_at=None if new.ttl_ms is None else from_ms(now + new.ttl_ms),
        superseded_by=None,
        provenance=new.provenance,
        quarantined=rule,
        scope=new.scope,
        key=new.key,
        tier=new.tier,
    )


def hold_stored(conn: sqlite3.Connection, fact: Fact, rule: str, created_at: int) -> None:
    """Hold a copy of a stored fact a rule flagged on read (the caller tombstones the fact)."""
    ttl = None
    if fact.expires_at is not None:
        ttl = max(1, int((fact.expires_at - fact.created_at).total_seconds() * 1000))
    conn.execute(
        f"INSERT OR IGNORE INTO quarantine ({_COLUMNS}) VALUES ({_MARKS})",
        (
            fact.id,
            fact.text,
            json.dumps(list(fact.tags), ensure_ascii=False),
            created_at,
            ttl,
            fact.provenance.session_id,
            json.dumps(list(fact.provenance.evidence), ensure_ascii=False),
            rule,
            "read",
            fact.scope.scope,
            fact.scope.subject,
            fact.key,
            fact.tier,
        ),
    )


def every(conn: sqlite3.Connection) -> list[QuarantinedFact]:
    rows = conn.execute(f"SELECT {_COLUMNS} FROM quarantine ORDER BY seq").fetchall()
    return [_held(row) for row in rows]


def by_id(conn: sqlite3.Connection, fact_id: str) -> QuarantinedFact | None:
    row = conn.execute(f"SELECT {_COLUMNS} FROM quarantine WHERE id = ?", (fact_id,)).fetchone()
    return None if row is None else _held(row)


def drop(conn: sqlite3.Connection, fact_id: str) -> bool:
    return conn.execute("DELETE FROM quarantine WHERE id = ?", (fact_id,)).rowcount > 0


def mark_released(conn: sqlite3.Connection, fact_id: str, rule: str, now: int) -> None:
    conn.execute(
        "INSERT OR REPLACE INTO released (id, rule, at) VALUES (?, ?, ?)", (fact_id, rule, now)
    )


def released_among(conn: sqlite3.Connection, fact_ids: list[str]) -> set[str]:
    marks = ", ".join("?" * len(fact_ids))
    rows = conn.execute(f"SELECT id FROM released WHERE id IN ({marks})", fact_ids).fetchall()
    return {str(row[0]) for row in rows}


def _free_id(conn: sqlite3.Connection) -> str:
    """A fresh id used by neither a fact nor a held write (a released write keeps its id)."""
    while True:
        fact_id = new_memory_id()
        taken = conn.execute(
            "SELECT 1 FROM facts WHERE id = ?1 UNION ALL SELECT 1 FROM quarantine WHERE id = ?1",
            (fact_id,),
        ).fetchone()
        if taken is None:
            return fact_id


def _held(row: sqlite3.Row) -> QuarantinedFact:
    found_on: Literal["write", "read"] = "read" if row["found_on"] == "read" else "write"
    return QuarantinedFact(
        id=row["id"],
        text=row["text"],
        tags=tuple(_strings(row["tags"])),
        created_at=from_ms(row["created_at"]),
        ttl_ms=row["ttl_ms"],
        provenance=Provenance(row["session_id"], tuple(_strings(row["evidence"]))),
        rule=row["rule"],
        found_on=found_on,
        scope=scope_of(row["scope"], row["subject"]),
        key=row["fact_key"],
        tier=row["tier"],
    )


def _strings(raw: Any) -> list[str]:
    value = json.loads(raw) if isinstance(raw, str) else []
    return [item for item in value if isinstance(item, str)] if isinstance(value, list) else []
