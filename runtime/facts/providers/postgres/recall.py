"""Recall on PostgreSQL: the BM25 ranking (``postgres.bm25``) alone, or fused with the cosine
ranking of the fact vectors by RRF in one SQL statement.
"""

from __future__ import annotations

from specwire.runtime.facts.fusion import RRF_K
from specwire.runtime.facts.lexical.ranking import PROOF_BOOST
from specwire.runtime.facts.providers.postgres.sql import COLUMNS as _COLUMNS
from specwire.runtime.facts.providers.postgres.sql import LIVE as _LIVE
from specwire.runtime.facts.providers.postgres.sql import PROVEN as _PROVEN
from specwire.runtime.facts.providers.postgres.sql import SCOPE as _SCOPE
from specwire.runtime.facts.providers.postgres.sql import SCOPE_COLUMNS as _SCOPE_COLUMNS

# Candidates taken from each ranking before fusion (as ``runtime.facts.hybrid``).
MIN_DEPTH = 20
# HNSW candidate list per query: pgvector's default, raised to the fusion depth (its maximum
# is 1000).
HNSW_EF_SEARCH = 40
HNSW_EF_SEARCH_MAX = 1000


def _hybrid_sql(table: str, where: str) -> str:
    """Full-text and cosine rankings (each cut at ``depth``), fused by RRF in SQL.

    The cosine side orders by the distance alone (no tie-breaker) under its ``LIMIT``, so the
    planner can walk the HNSW index instead of sorting every vector of the scope; with
    ``hnsw.iterative_scan`` (set per transaction by ``_ranking``) the walk goes on past the
    rows the scope and liveness filters drop until ``depth`` rows are found. ``where``: the
    caller's visible scope keys and tiers (``visible_clause``), on both rankings."""
    return f"""
WITH lexical AS (
    SELECT l.id, l.rank FROM unnest(%(lexical)s::text[]) WITH ORDINALITY AS l(id, rank)
),
nearest AS (
    SELECT n.id, row_number() OVER (ORDER BY n.distance, n.seq) AS rank
    FROM (
        SELECT v.fact_id AS id, f.seq, v.embedding <=> %(vec)s::vector AS distance
        FROM {table} v JOIN facts f ON f.id = v.fact_id
        WHERE v.tenant = %(tenant)s AND v.spec = %(spec)s AND v.session = %(session)s
            AND v.embedder = %(embedder)s AND {_LIVE} AND {where}
        ORDER BY v.embedding <=> %(vec)s::vector LIMIT %(depth)s
    ) AS n
),
fused AS (
    SELECT id, sum(1.0 / ({RRF_K} + rank)) AS rrf
    FROM (SELECT id, rank FROM lexical UNION ALL SELECT id, rank FROM nearest) AS both_rankings
    GROUP BY id
)
SELECT {_COLUMNS},
    fused.rrf + (CASE WHEN {_PROVEN} THEN {PROOF_BOOST!r} ELSE 0 END) AS score,
    {_SCOPE_COLUMNS}
FROM fused JOIN facts f ON f.id = fused.id
WHERE {_SCOPE}
ORDER BY score DESC, f.seq LIMIT %(k)s"""
