"""``FactsTuning``: the fact store's index thresholds, passed to ``FactStore.open``.

The defaults are the values the store is tuned for; tests and benchmarks pass smaller (or
larger) ones to exercise a path a test-sized store would not take. Every value only moves the
point where the store switches between two ways of computing the same answer (FTS5 or the
in-memory index, scoring every posting or pruning, an exact or a sketched cosine scan, a
rebuild or a snapshot), never the answer itself. Read once, when an index is made.
"""

from __future__ import annotations

from specwire.runtime.core.lazy_dataclass import lazy_methods_dataclass


@lazy_methods_dataclass(frozen=True)
class FactsTuning:
    """The fact indexes' thresholds, passed to ``FactStore.open``."""

    # -- lexical (BM25) --------------------------------------------------------------------
    lexical_index_from: int = 5_000
    """From this many facts written, recall ranks through the in-memory index, not FTS5."""
    lexical_snapshot_min_facts: int = 20_000
    """The BM25 index is saved at close from this many facts (a smaller one rebuilds fast)."""
    lexical_snapshot_min_changes: int = 1_000
    """...when this many facts and tombstones (or 1% of the facts) changed since the last save."""
    lexical_rebuild_after: int = 50_000
    """More new facts than this (and than the index holds) are indexed by a rebuild."""
    prune_min_postings: int = 20_000
    """Below this many postings in a query, every posting is scored (as cheap as pruning)."""
    bound_min_postings: int = 512
    """Terms with fewer base postings than this get no block bounds: always scored."""
    block_shift: int = 12
    """Pruning cuts the facts into blocks of ``2 ** block_shift`` seqs (4,096)."""
    tail_merge_min: int = 1 << 16
    """New postings are merged into the index's base once the tail holds this many (or an
    eighth of the base)."""
    narrow_share: int = 4
    """A filtered recall scores only the visible groups' facts when they hold at most
    1/``narrow_share`` of the query's postings (0: always; a huge value: never)."""
    # -- cosine ----------------------------------------------------------------------------
    catch_up_batch: int = 256
    """Facts without a vector of the embedder are embedded this many per query."""
    sketch_from_rows: int = 50_000
    """From this many rows a cosine query scans sign sketches first, not every row exactly."""
    sketch_pool: int = 10_000
    """At most this many rows of fewest differing sketch bits are ranked by bit agreement."""
    sketch_candidates: int = 2_000
    """At most this many of those (the best half of the pool) are rescored exactly."""
    vector_snapshot_min_rows: int = 20_000
    """The cosine index is saved at close from this many rows (a smaller one rebuilds fast)."""
    vector_snapshot_min_changes: int = 1_000
    """...when this many rows and tombstones (or 1% of the rows) changed since the last save."""


DEFAULT_TUNING = FactsTuning()
