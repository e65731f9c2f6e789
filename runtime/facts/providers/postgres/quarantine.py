"""Quarantine on PostgreSQL: writes the injection scanner flags, held in ``quarantine`` (never
in ``facts``), and stored facts flagged when a recall or a read screens them again.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from specwire.runtime.core.ids import new_memory_id
from specwire.runtime.facts.model import FactRecord
from specwire.runtime.facts.providers.postgres import admin as admin_sql
from specwire.runtime.facts.providers.postgres import forgetting, term_stats
from specwire.runtime.facts.providers.postgres.binding import Binding
from specwire.runtime.facts.providers.postgres.retained import expiry
from specwire.runtime.facts.providers.postgres.sql import SCOPE as _SCOPE
from specwire.runtime.facts.providers.postgres.sql import key_params
from specwire.runtime.facts.providers.protocol import ProviderHit, RetainResult
from specwire.runtime.facts.validation import NewFact
from specwire.runtime.safety.injection import InjectionHit

if TYPE_CHECKING:
    from psycopg import Connection


def insert_held(
    conn: Connection[Any],
    fact_id: str,
    new: NewFact,
    rule: str,
    params: dict[str, Any],
) -> None:
    """Hold a write the scanner flagged in ``quarantine`` (never in ``facts``)."""
    conn.execute(
        """INSERT INTO quarantine (id, tenant, spec, session, text, tags, created_at,
        ttl_ms, session_id, evidence, rule, found_on, scope, subject, fact_key, tier)
        VALUES (%(id)s, %(tenant)s, %(spec)s, %(session)s, %(text)s, %(tags)s, %(now)s,
        %(ttl)s, %(session_id)s, %(evidence)s, %(rule)s, 'write', %(fact_scope)s,
        %(fact_subject)s, %(fact_key)s, %(tier)s)""",
        {
            **params,
            **key_params(new.scope),
            "fact_key": new.key,
            "tier": new.tier,
            "id": fact_id,
            "text": new.text,
            "tags": list(new.tags),
            "ttl": new.ttl_ms,
            "session_id": new.provenance.session_id,
            "evidence": list(new.provenance.evidence),
            "rule": rule,
        },
    )


def hold(db: Binding, new: NewFact, hit: InjectionHit) -> RetainResult:
    with db.transaction("quarantine a memory") as conn:
        now = db.now_ms()
        fact_id = new_memory_id()
        insert_held(conn, fact_id, new, hit.label, db.params(now))
        return RetainResult(fact_id, True, expiry(new, now), None, hit.label)


def flagged_on_read(db: Binding, hits: Sequence[ProviderHit | FactRecord]) -> dict[str, str]:
    flagged: dict[str, str] = {}
    if db.screen is None:
        return flagged
    for hit in hits:
        if hit.id in db.clean:
            continue
        found = db.screen("\n".join([hit.text, *hit.tags]))
        if found is None:
            if len(db.clean) > 100_000:
                db.clean.clear()
            db.clean.add(hit.id)
        else:
            flagged[hit.id] = found.label
    return flagged


def hold_on_read(db: Binding, flagged: dict[str, str]) -> None:
    """Copy each flagged stored fact into quarantine and tombstone it (forgotten), except
    those the owner released (clean from now on)."""
    with db.transaction("quarantine a memory") as conn:
        params = db.params(db.now_ms())
        term_stats.lock_binding(conn, params)
        released = admin_sql.released_among(conn, params, list(flagged))
        db.clean.update(released)
        for fact_id, rule in flagged.items():
            if fact_id in released:
                continue
            conn.execute(
                f"""INSERT INTO quarantine (id, tenant, spec, session, text, tags,
                created_at, ttl_ms, session_id, evidence, rule, found_on, scope, subject,
                fact_key, tier)
                SELECT f.id, f.tenant, f.spec, f.session, f.text, f.tags, %(now)s,
                CASE WHEN f.expires_at IS NULL THEN NULL
                     ELSE greatest(1, f.expires_at - f.created_at) END,
                f.session_id, f.evidence, %(rule)s, 'read', f.scope, f.subject,
                f.fact_key, f.tier
                FROM facts f WHERE f.id = %(id)s AND {_SCOPE}
                ON CONFLICT (id) DO NOTHING""",
                {**params, "id": fact_id, "rule": rule},
            )
            forgetting.tombstone(conn, [fact_id], "forgotten", f"quarantined: {rule}", params)
