"""Why each fact of a recall ranked where it did: the owner's console shows it beside a search.

``FactStore.recall`` answers the ranking the agent sees; ``explain`` takes its hits and the
two rankings hybrid recall fuses, each cut as deep as recall cuts it (``hybrid.MIN_DEPTH``,
4 k), and says for every hit its BM25 rank and score (the evidence factor included, as the
ranking applies it), its cosine rank, the reciprocal-rank votes (``fusion``) and whether the
proof boost applied. A store without an embedder ranks by BM25 alone: there is no cosine part.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from specwire.runtime.core.scopes import ScopeKey
from specwire.runtime.facts.fusion import RRF_K
from specwire.runtime.facts.hybrid import MIN_DEPTH
from specwire.runtime.facts.lexical.ranking import EVIDENCE_FACTOR, PROOF_BOOST
from specwire.runtime.facts.model import Fact
from specwire.runtime.facts.sql import vectors as vector_queries
from specwire.runtime.facts.store import FactStore


@dataclass(frozen=True)
class RankedFact:
    """One recalled fact and the parts of its score."""

    fact: Fact
    rank: int  # 1-based, as recall returned it
    score: float  # recall's own score
    lexical_rank: int | None  # None: not among the BM25 candidates
    lexical_score: float | None  # BM25, with the evidence factor when the fact is proven
    vector_rank: int | None  # None: no embedder, or not among the cosine candidates
    fused: bool  # the score is the RRF fusion of both rankings
    evidence_factor: float  # what proof multiplied (BM25) or added (RRF) to the score

    def reasons(self) -> tuple[str, ...]:
        """The reasons, one short phrase each."""
        found: list[str] = []
        if self.lexical_rank is not None:
            found.append(f"BM25 #{self.lexical_rank} ({self.lexical_score:.4g})")
            if self.fused:
                found.append(f"BM25 vote 1/({RRF_K}+{self.lexical_rank})")
        if self.vector_rank is not None:
            found.append(f"cosine #{self.vector_rank}, vote 1/({RRF_K}+{self.vector_rank})")
        if self.fact.has_evidence:
            found.append(
                f"proof boost +{PROOF_BOOST:.4g}"
                if self.fused
                else f"evidence factor x{EVIDENCE_FACTOR:.4g}"
            )
        return tuple(found) or ("matched",)


def explain(
    store: FactStore, query: str, k: int, visible: Sequence[ScopeKey] | None
) -> list[RankedFact]:
    """Recall ``query`` as the agent would (``visible``: the scope keys searched, None: any)
    and explain every hit."""
    keys = None if visible is None else tuple(visible)
    hits = store.recall(query, k, visible=keys)
    if store._embedder is None:
        # BM25 alone: recall's hits are the lexical ranking's head, scores included.
        lexical_rank = {hit.fact.id: (rank, hit.score) for rank, hit in enumerate(hits, start=1)}
        vector_rank: dict[str, int] = {}
    else:
        depth = max(MIN_DEPTH, 4 * k)
        lexical = store._lexical_ranking(query, depth, keys, ())
        lexical_rank = {h.fact.id: (rank, h.score) for rank, h in enumerate(lexical, start=1)}
        vector_rank = _cosine_ranks(store, query, depth, keys)
    fused = bool(vector_rank)
    explained = []
    for rank, hit in enumerate(hits, start=1):
        bm25 = lexical_rank.get(hit.fact.id)
        explained.append(
            RankedFact(
                fact=hit.fact,
                rank=rank,
                score=hit.score,
                lexical_rank=None if bm25 is None else bm25[0],
                lexical_score=None if bm25 is None else bm25[1],
                vector_rank=vector_rank.get(hit.fact.id),
                fused=fused,
                evidence_factor=(PROOF_BOOST if fused else EVIDENCE_FACTOR)
                if hit.fact.has_evidence
                else (0.0 if fused else 1.0),
            )
        )
    return explained


def _cosine_ranks(
    store: FactStore, query: str, depth: int, visible: tuple[ScopeKey, ...] | None
) -> dict[str, int]:
    """Fact id → rank in the cosine ranking among the ``visible`` keys' facts (empty without
    an embedder)."""
    if store._embedder is None:
        return {}
    semantic = store._semantic_index()
    if semantic is None:
        return {}
    semantic.refresh(store._file)
    vector = semantic.embed_or_none([query])
    if vector is None:
        return {}
    now = store._now_ms()
    seqs = semantic.nearest(vector[0], now, depth)
    with store._file.reading("recall") as conn:
        if conn is None:
            return {}
        facts = vector_queries.live_by_seqs(conn, seqs, now)
    ranks: dict[str, int] = {}
    for seq in seqs:
        fact = facts.get(seq)
        if fact is not None and (visible is None or fact.scope in visible):
            ranks.setdefault(fact.id, len(ranks) + 1)
    return ranks
