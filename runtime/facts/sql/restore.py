"""SQL of a restore (``runtime.facts.restoring``): facts and held writes written exactly as
another store holds them, inside the caller's transaction.

Ids the file already holds are skipped, not written again: a restore cut short and run again
writes only what is missing. Facts come heads first (``restoring.restore_order``), so a
supersede link always names a fact already in the file (the schema's foreign keys).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence

from specwire.runtime.facts.model import FactStatus, QuarantinedFact, to_ms
from specwire.runtime.facts.restoring import new_fact, new_held, replaced_by
from specwire.runtime.facts.sql import queries
from specwire.runtime.facts.text import document_terms

_MARKS = ", ".join("?" * 13)
_FACT = f"""INSERT INTO facts (id, text, norm_text, terms, tags, created_at, expires_at,
session_id, evidence, scope, subject, fact_key, tier) VALUES ({_MARKS})"""
_HELD = f"""INSERT INTO quarantine (id, text, tags, created_at, ttl_ms, session_id, evidence,
rule, found_on, scope, subject, fact_key, tier) VALUES ({_MARKS})"""
_TOMBSTONE = """INSERT INTO tombstones (kind, target, at, reason, superseded_by)
VALUES (?, ?, ?, ?, ?)"""


def present(conn: sqlite3.Connection, table: str, ids: Sequence[str]) -> set[str]:
    """Which of ``ids`` the table (``facts`` or ``quarantine``) holds already."""
    found: set[str] = set()
    for start in range(0, len(ids), 500):
        chunk = list(ids[start : start + 500])
        marks = ", ".join("?" * len(chunk))
        rows = conn.execute(f"SELECT id FROM {table} WHERE id IN ({marks})", chunk)
        found.update(str(row[0]) for row in rows)
    return found


def restore_facts(conn: sqlite3.Connection, statuses: Sequence[FactStatus]) -> int:
    """Write the facts the file lacks, each with its tombstone and supersede link; returns
    how many were written."""
    have = present(conn, "facts", [status.fact.id for status in statuses])
    written = 0
    for status in statuses:
        fact = status.fact
        if fact.id in have:
            continue
        new = new_fact(fact)
        created = to_ms(fact.created_at)
        conn.execute(
            _FACT,
            (
                fact.id,
                new.text,
                new.norm_text,
                document_terms(new.text, new.tags),
                json.dumps(list(new.tags), ensure_ascii=False),
                created,
                None if fact.expires_at is None else to_ms(fact.expires_at),
                new.provenance.session_id,
                json.dumps(list(new.provenance.evidence), ensure_ascii=False),
                new.scope.scope,
                new.scope.subject,
                new.key,
                new.tier,
            ),
        )
        head = replaced_by(status)
        if head is not None:
            queries.mark_superseded(conn, fact.id, head)
        tombstone = status.tombstone
        if tombstone is not None:
            conn.execute(
                _TOMBSTONE,
                (
                    tombstone.kind,
                    fact.id,
                    to_ms(tombstone.at),
                    tombstone.reason,
                    tombstone.superseded_by,
                ),
            )
        have.add(fact.id)
        written += 1
    return written


def restore_held(conn: sqlite3.Connection, held: Sequence[QuarantinedFact]) -> int:
    """Hold the writes the file lacks, with their ids, rules and times; returns how many."""
    have = present(conn, "quarantine", [item.id for item in held])
    written = 0
    for item in held:
        if item.id in have:
            continue
        new = new_held(item)
        conn.execute(
            _HELD,
            (
                item.id,
                new.text,
                json.dumps(list(new.tags), ensure_ascii=False),
                to_ms(item.created_at),
                new.ttl_ms,
                new.provenance.session_id,
                json.dumps(list(new.provenance.evidence), ensure_ascii=False),
                item.rule,
                item.found_on,
                new.scope.scope,
                new.scope.subject,
                new.key,
                new.tier,
            ),
        )
        have.add(item.id)
        written += 1
    return written
