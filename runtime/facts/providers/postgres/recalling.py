"""Recall and point reads on PostgreSQL: the BM25 ranking (``postgres.bm25``) alone, or fused
with the cosine ranking of the fact vectors by RRF in one SQL statement; what either returns is
screened again (``quarantine``).
"""

from __future__ import annotations

from specwire.runtime.facts.fusion import RRF_K
from specwire.runtime.facts.lexical.ranking import PROOF_BOOST, unit_score
from specwire.runtime.facts.providers.postgres import bm25, keyed, quarantine
from specwire.runtime.facts.providers.postgres.binding import Binding, FactScope
from specwire.runtime.facts.providers.postgres.schema import vector_table
from specwire.runtime.facts.providers.postgres.sql import COLUMNS as _COLUMNS
from specwire.runtime.facts.providers.postgres.sql import LIVE as _LIVE
from specwire.runtime.facts.providers.postgres.sql import PROVEN as _PROVEN
from specwire.runtime.facts.providers.postgres.sql import SCOPE as _SCOPE
from specwire.runtime.facts.providers.postgres.sql import SCOPE_COLUMNS as _SCOPE_COLUMNS
from specwire.runtime.facts.providers.postgres.sql import key_of, visible_clause
from specwire.runtime.facts.providers.protocol import (
    ProviderHit,
    ReadRequest,
    ReadResponse,
    RecallRequest,
    RecallResponse,
)
from specwire.runtime.facts.providers.recall_bounds import search_text
from specwire.runtime.facts.text import query_terms

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
    ``hnsw.iterative_scan`` (set per transaction by ``ranking``) the walk goes on past the
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


def recall(
    db: Binding, request: RecallRequest, *, scope: FactScope | None = None
) -> RecallResponse:
    db.check_scope(scope)
    flagged: set[str] = set()
    hits: list[ProviderHit] = []
    for _ in range(3):
        hits = ranking(db, request)
        found = quarantine.flagged_on_read(db, hits)
        if not found:
            return RecallResponse(tuple(hits))
        quarantine.hold_on_read(db, found)
        flagged.update(found)
    return RecallResponse(tuple(hit for hit in hits if hit.id not in flagged))


def ranking(db: Binding, request: RecallRequest) -> list[ProviderHit]:
    terms = query_terms(search_text(request))
    if not terms:
        return []
    limit = request.limit
    depth = max(MIN_DEPTH, 4 * limit)
    vector = None if db.embedder is None else db.vector([search_text(request)])
    # Only the caller's visible scope keys, and plain facts or the asked tiers.
    where, where_params = visible_clause(request.visible, request.tiers)
    with db.transaction("recall") as conn:
        params = {**db.params(db.now_ms()), "k": limit}
        lexical = bm25.ranked(
            conn,
            params,
            terms,
            limit if vector is None else depth,
            where,
            where_params,
            postings_from=db.postings_from,
            scored_at_most=db.scored_at_most,
            postings_rare=db.postings_rare,
        )
        if vector is None:
            rows = lexical
        else:
            assert db.dim is not None and db.embedder is not None
            # pgvector >= 0.8: keep scanning the HNSW index until ``depth`` rows pass the
            # scope filters (without it a scope other tenants dominate gets fewer hits).
            conn.execute(
                "SELECT set_config('hnsw.iterative_scan', 'relaxed_order', true), "
                "set_config('hnsw.ef_search', %s, true)",
                (str(min(HNSW_EF_SEARCH_MAX, max(HNSW_EF_SEARCH, depth))),),
            )
            rows = conn.execute(
                _hybrid_sql(vector_table(db.dim), where),
                {
                    **params,
                    **where_params,
                    "lexical": [row[0] for row in lexical],
                    "depth": depth,
                    "vec": vector[0],
                    "embedder": db.embedder.id,
                },
            ).fetchall()
    return [
        ProviderHit(
            row[0],
            row[1],
            tuple(row[2]),
            unit_score(float(row[6])),
            bool(row[5]),
            scope=key_of(row[7], row[8]),
            key=row[9],
            tier=row[10],
        )
        for row in rows
    ]


def read(db: Binding, request: ReadRequest, *, scope: FactScope | None = None) -> ReadResponse:
    """Live, visible facts only (a fact elsewhere is absent, never an error), screened again
    as recall screens them, sorted by scope key."""
    db.check_scope(scope)
    with db.transaction("read") as conn:
        rows = keyed.records(conn, db.params(db.now_ms()), request)
    found = [keyed.record(row) for row in rows]
    flagged = quarantine.flagged_on_read(db, found)
    if flagged:
        quarantine.hold_on_read(db, flagged)
    kept = [record for record in found if record.id not in flagged]
    return ReadResponse(tuple(sorted(kept, key=lambda record: (record.scope, record.id))))
