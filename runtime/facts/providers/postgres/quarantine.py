"""Quarantine on PostgreSQL: writes the injection scanner flags, held in ``quarantine`` (never
in ``facts``), and stored facts flagged when a recall or a read screens them again.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from specwire.runtime.facts.providers.postgres.sql import key_params
from specwire.runtime.facts.validation import NewFact

if TYPE_CHECKING:
    from psycopg import Connection


def _insert_held(
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
