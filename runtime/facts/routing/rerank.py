"""How the router merges the providers' rankings into one: reciprocal-rank fusion.

Scores are provider-specific (BM25 squashed, cosine, a service's own) and never compared
across providers, so the router fuses *ranks*: each provider's hit at rank r (1-based, after
its own duplicates by id are dropped) votes ``1 / (RRF_K + r)`` for its content fingerprint.
The same content found by several providers is one result whose votes add up (agreement
counts), shown as the best-ranked copy (the earlier provider on a tie, the primary first) with
``also in <provider>`` among its reasons. Ties go to the earlier provider, then the better
rank, so the order is deterministic. The fused score is the votes over the most any result
could get, in ``[0, 1)``.

``bench/router_bench.py`` measures this against the alternatives kept here for it: ``score``
(providers' own scores, compared as if they meant the same) and ``primary-first`` (the
primary's hits, then each other provider's).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Literal

from specwire.runtime.facts.fusion import RRF_K
from specwire.runtime.facts.providers.protocol import ProviderHit
from specwire.runtime.facts.text import fingerprint

Method = Literal["rrf", "score", "primary-first"]


def fuse(rankings: Sequence[Sequence[ProviderHit]], method: Method = "rrf") -> list[ProviderHit]:
    """One ranking from ``rankings`` (one per provider, best first, in provider order; every
    hit's ``provider`` set), without duplicates by (provider, id) or by fingerprint."""
    votes: dict[str, float] = {}
    best: dict[str, tuple[tuple[float, int, int], ProviderHit]] = {}
    also: dict[str, list[str]] = {}
    for position, ranking in enumerate(rankings):
        seen: set[str] = set()
        rank = 0
        for hit in ranking:
            if hit.id in seen:
                continue
            seen.add(hit.id)
            rank += 1
            key = hit.fingerprint or fingerprint(hit.text)
            vote = _vote(method, hit, rank, position)
            order = (-vote, position, rank)
            votes[key] = (
                votes.get(key, 0.0) + vote if method == "rrf" else max(votes.get(key, vote), vote)
            )
            if key not in best or order < best[key][0]:
                if key in best:
                    also.setdefault(key, []).append(best[key][1].provider or "")
                best[key] = (order, hit)
            else:
                also.setdefault(key, []).append(hit.provider or "")
    ceiling = len(rankings) / (RRF_K + 1) if method == "rrf" else 1.0
    merged = sorted(votes, key=lambda key: (-votes[key], best[key][0][1], best[key][0][2]))
    fused = []
    for key in merged:
        hit = best[key][1]
        others = tuple(f"also in {name}" for name in dict.fromkeys(also.get(key, ())) if name)
        score = min(0.999, votes[key] / ceiling) if ceiling > 0 else 0.0
        fused.append(
            dataclasses.replace(
                hit,
                score=score if method == "rrf" else hit.score,
                fingerprint=key,
                reasons=(*hit.reasons, *others),
            )
        )
    return fused


def _vote(method: Method, hit: ProviderHit, rank: int, position: int) -> float:
    if method == "rrf":
        return 1.0 / (RRF_K + rank)
    if method == "score":
        return hit.score
    return float(-position * 1000 - rank)  # primary-first: provider order, then rank
