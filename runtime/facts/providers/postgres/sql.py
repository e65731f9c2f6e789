"""SQL fragments every PostgreSQL fact statement shares: the scope, liveness and ranking."""

from __future__ import annotations

from specwire.runtime.facts.lexical.ranking import EVIDENCE_FACTOR

# Every statement names the provider's whole scope (tenant, spec, session) in its WHERE.
SCOPE = "f.tenant = %(tenant)s AND f.spec = %(spec)s AND f.session = %(session)s"
LIVE = f"""{SCOPE} AND f.superseded_by IS NULL
AND (f.expires_at IS NULL OR f.expires_at > %(now)s)
AND NOT EXISTS (SELECT 1 FROM tombstones t WHERE t.target = f.id AND t.tenant = %(tenant)s
    AND t.spec = %(spec)s AND t.session = %(session)s)"""
COLUMNS = "f.id, f.text, f.tags, f.expires_at, f.session_id, f.evidence"
PROVEN = "(cardinality(f.evidence) > 0)"
LEXICAL_RANK = f"ts_rank(f.tsv, q.q) * (CASE WHEN {PROVEN} THEN {EVIDENCE_FACTOR!r} ELSE 1.0 END)"
