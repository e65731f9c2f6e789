"""Hybrid recall: the BM25 ranking fused with the cosine ranking by RRF (``fusion``).

Both rankings see only live facts (the lexical SQL and the matrix's masks apply the same TTL,
supersede and forget filters) and each is cut at ``depth`` candidates, so the cost follows k,
not the number of facts matched. The cosine ranking runs on a worker thread while the lexical one
runs on the caller's. When the embedder fails on the query, recall answers with the BM25 ranking
alone.
"""

from __future__ import annotations

import os
import sqlite3
import threading
from concurrent.futures import ThreadPoolExecutor, wait
from typing import TYPE_CHECKING

from specwire.runtime.core.scopes import ScopeKey
from specwire.runtime.facts.fusion import reciprocal_rank_fusion
from specwire.runtime.facts.model import Fact, RecallHit
from specwire.runtime.facts.sql import queries
from specwire.runtime.facts.sql import vectors as vector_queries
from specwire.runtime.facts.vector.matrix import DamagedVectorsError
from specwire.runtime.facts.vector.semantic import SemanticIndex

if TYPE_CHECKING:
    from specwire.runtime.facts.store import FactStore

# Candidates taken from each ranking: RRF's top k hardly moves past a few times k.
MIN_DEPTH = 20
# With a scope or tier filter, the cosine ranking is cut this many times deeper (its
# candidates are filtered after it ranks).
FILTERED_DEPTH = 4

_workers: tuple[int, ThreadPoolExecutor] | None = None
_workers_lock = threading.Lock()


def _worker() -> ThreadPoolExecutor:
    """The process's pool for cosine passes (made again in a forked child: a child has none of
    its parent's threads)."""
    global _workers
    with _workers_lock:
        if _workers is None or _workers[0] != os.getpid():
            _workers = (os.getpid(), ThreadPoolExecutor(2, thread_name_prefix="specwire-cosine"))
        return _workers[1]


def hybrid_recall(
    store: FactStore,
    semantic: SemanticIndex,
    query: str,
    k: int,
    visible: tuple[ScopeKey, ...] | None = None,
    tiers: tuple[str, ...] | None = (),
) -> list[RecallHit]:
    """Scopes: the lexical ranking is filtered by ``visible`` and ``tiers`` where it ranks; the
    cosine ranking is cut deeper when a filter applies (``FILTERED_DEPTH``) and its candidates
    outside the filter are dropped when their rows are read, so nothing invisible is returned
    (an audience whose facts are rare among the nearest vectors gets fewer cosine candidates)."""
    depth = max(MIN_DEPTH, 4 * k)
    filtered = visible is not None or tiers is not None
    semantic.refresh(store._file)
    query_vector = semantic.embed_or_none([query])
    if query_vector is None:
        return store._lexical_ranking(query, depth, visible, tiers)[:k]
    now = store._now_ms()
    # The two rankings overlap: the cosine pass is numpy work that releases the GIL. The worker
    # never takes the store's lock (the caller may hold it): a damaged vector snapshot comes
    # back as an error, and this thread rebuilds from the file and asks again.
    cosine_depth = depth * FILTERED_DEPTH if filtered else depth
    pending = _worker().submit(semantic.nearest, query_vector[0], now, cosine_depth)
    try:
        lexical = store._lexical_seqs(query, depth, visible, tiers)
    finally:
        wait([pending])  # never leave the pass running past this call
    try:
        cosine = pending.result()
    except DamagedVectorsError:
        cosine = semantic.ranking(store._file, query_vector[0], now, cosine_depth)
    if lexical is None:
        lexical_hits = store._lexical_ranking(query, depth, visible, tiers)
        return _fused_hits(store, lexical_hits, cosine, now, k, visible, tiers)
    with store._file.reading("recall") as conn:
        if conn is None:
            return []
        lexical_seqs = [seq for seq, _ in lexical]
        proven = {seq for seq, is_proven in lexical if is_proven}
        known = set(lexical_seqs)
        others = [seq for seq in cosine if seq not in known]
        if filtered:
            others = queries.seqs_admitted(conn, others, visible, tiers)
        live = queries.live_proven(conn, others, now)
        proven.update(seq for seq, is_proven in live.items() if is_proven)
        cosine = [seq for seq in cosine if seq in known or seq in live]
        fused = reciprocal_rank_fusion([lexical_seqs, cosine], proven)
        return _hits(conn, fused, now, k)


def _hits(
    conn: sqlite3.Connection, fused: list[tuple[int, float]], now: int, k: int
) -> list[RecallHit]:
    """The best ``k`` of ``fused`` as hits, reading only their rows (one that stopped being live
    since it was ranked is passed over)."""
    hits: list[RecallHit] = []
    start = 0
    while len(hits) < k and start < len(fused):
        batch = fused[start : start + k - len(hits)]
        start += len(batch)
        facts = vector_queries.live_by_seqs(conn, [seq for seq, _ in batch], now)
        hits += [RecallHit(facts[seq], score) for seq, score in batch if seq in facts]
    return hits


def _fused_hits(
    store: FactStore,
    lexical: list[RecallHit],
    seqs: list[int],
    now: int,
    k: int,
    visible: tuple[ScopeKey, ...] | None,
    tiers: tuple[str, ...] | None,
) -> list[RecallHit]:
    """The fusion from the lexical hits (when only they can answer) and the cosine seqs."""
    with store._file.reading("recall") as conn:
        if conn is None:
            return []
        if visible is not None or tiers is not None:
            seqs = queries.seqs_admitted(conn, seqs, visible, tiers)
        by_seq = vector_queries.live_by_seqs(conn, seqs, now)
    facts: dict[str, Fact] = {hit.fact.id: hit.fact for hit in lexical}
    cosine: list[str] = []
    for seq in seqs:
        fact = by_seq.get(seq)
        if fact is not None:
            facts.setdefault(fact.id, fact)
            cosine.append(fact.id)
    proven = {fact_id for fact_id, fact in facts.items() if fact.has_evidence}
    fused = reciprocal_rank_fusion([[hit.fact.id for hit in lexical], cosine], proven)
    return [RecallHit(facts[fact_id], score) for fact_id, score in fused[:k]]
