"""Reciprocal-rank fusion of the lexical (BM25) and cosine rankings of hybrid recall.

Each ranking votes ``1 / (RRF_K + rank)`` (rank 1-based) for each fact it holds; candidates are
the union of both rankings. A fact backed by tool-use evidence then gets ``PROOF_BOOST`` (1/61,
about one rank position) added once, as the reference does. Ties keep the first-seen order
(lexical first, then cosine), so the fusion is deterministic.
"""

from __future__ import annotations

from collections.abc import Collection, Hashable, Sequence
from typing import TypeVar

from specwire.runtime.facts.lexical.ranking import PROOF_BOOST

RRF_K = 60

Item = TypeVar("Item", bound=Hashable)


def reciprocal_rank_fusion(
    rankings: Sequence[Sequence[Item]], proven: Collection[Item] = ()
) -> list[tuple[Item, float]]:
    """Fused ``(id, score)`` pairs, best first, over the union of ``rankings`` (ids best first)."""
    scores: dict[Item, float] = {}
    for ranking in rankings:
        for rank, item in enumerate(ranking, start=1):
            scores[item] = scores.get(item, 0.0) + 1.0 / (RRF_K + rank)
    for item in scores:
        if item in proven:
            scores[item] += PROOF_BOOST
    order = {item: position for position, item in enumerate(scores)}
    return sorted(scores.items(), key=lambda pair: (-pair[1], order[pair[0]]))
