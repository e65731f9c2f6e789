"""A restore on PostgreSQL (``runtime.facts.restoring``): facts and held writes written exactly
as another store holds them, inside the provider's transaction and always within its scope.

Ids are unique across the whole database (every tenant and spec): an id this scope already
holds is skipped (a restore run again writes only what is missing); an id another scope holds
is refused in one line, and the transaction writes nothing. Restored facts carry no vector:
full-text recall finds them, as it finds imported ones.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from specwire.runtime.facts.model import FactStatus, QuarantinedFact, to_ms
from specwire.runtime.facts.providers.postgres.sql import subject_of
from specwire.runtime.facts.restoring import RestoreError, new_fact, new_held, replaced_by
from specwire.runtime.facts.text import document_terms

if TYPE_CHECKING:
    from psycopg import Connection

_OWNED = """SELECT id, (tenant = %(tenant)s AND spec = %(spec)s AND session = %(session)s)
FROM {table} WHERE id = ANY(%(ids)s::text[])"""
_FACT = """INSERT INTO facts (id, tenant, spec, session, text, norm_text, terms, tags,
created_at, expires_at, superseded_by, session_id, evidence, scope, subject, fact_key, tier)
VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)"""
_TOMBSTONE = """INSERT INTO tombstones (target, tenant, spec, session, kind, at, reason,
superseded_by) VALUES (%s, %s, %s, %s, %s, %s, %s, %s)"""
_HELD = """INSERT INTO quarantine (id, tenant, spec, session, text, tags, created_at, ttl_ms,
session_id, evidence, rule, found_on, scope, subject, fact_key, tier)
VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)"""


def _missing(
    conn: Connection[Any], params: dict[str, Any], table: str, ids: list[str], what: str
) -> set[str]:
    """The ids of ``ids`` this scope lacks; refused when another scope holds one of them."""
    rows = conn.execute(_OWNED.format(table=table), {**params, "ids": ids}).fetchall()
    for fact_id, ours in rows:
        if not ours:
            raise RestoreError(
                f"{what} {fact_id}: this id is taken by another tenant or spec in the target "
                "database; nothing of this batch was written"
            )
    return set(ids) - {str(row[0]) for row in rows}


def restore_facts(
    conn: Connection[Any], params: dict[str, Any], statuses: Sequence[FactStatus]
) -> int:
    missing = _missing(conn, params, "facts", [s.fact.id for s in statuses], "fact")
    scope = (params["tenant"], params["spec"], params["session"])
    facts: list[tuple[Any, ...]] = []
    tombstones: list[tuple[Any, ...]] = []
    for status in statuses:
        fact = status.fact
        if fact.id not in missing:
            continue
        missing.discard(fact.id)
        new = new_fact(fact)
        facts.append(
            (
                fact.id,
                *scope,
                new.text,
                new.norm_text,
                document_terms(new.text, new.tags),
                list(new.tags),
                to_ms(fact.created_at),
                None if fact.expires_at is None else to_ms(fact.expires_at),
                replaced_by(status),
                new.provenance.session_id,
                list(new.provenance.evidence),
                new.scope.scope,
                subject_of(new.scope),
                new.key,
                new.tier,
            )
        )
        tombstone = status.tombstone
        if tombstone is not None:
            tombstones.append(
                (
                    fact.id,
                    *scope,
                    tombstone.kind,
                    to_ms(tombstone.at),
                    tombstone.reason,
                    tombstone.superseded_by,
                )
            )
    with conn.cursor() as cursor:
        if facts:
            cursor.executemany(_FACT, facts)
        if tombstones:
            cursor.executemany(_TOMBSTONE, tombstones)
    return len(facts)


def restore_held(
    conn: Connection[Any], params: dict[str, Any], held: Sequence[QuarantinedFact]
) -> int:
    missing = _missing(conn, params, "quarantine", [h.id for h in held], "held write")
    scope = (params["tenant"], params["spec"], params["session"])
    rows: list[tuple[Any, ...]] = []
    for item in held:
        if item.id not in missing:
            continue
        missing.discard(item.id)
        new = new_held(item)
        rows.append(
            (
                item.id,
                *scope,
                new.text,
                list(new.tags),
                to_ms(item.created_at),
                new.ttl_ms,
                new.provenance.session_id,
                list(new.provenance.evidence),
                item.rule,
                item.found_on,
                new.scope.scope,
                subject_of(new.scope),
                new.key,
                new.tier,
            )
        )
    if rows:
        with conn.cursor() as cursor:
            cursor.executemany(_HELD, rows)
    return len(rows)
