"""How lexical recall turns FTS5's ``bm25()`` into a score, and the evidence boost.

SQLite's ``bm25()`` is *lower is better* and negative for every match (FTS5 clamps a term's IDF
to a tiny positive value, so a match never scores zero). The store ranks by the positive
``-bm25()``, best first, ties broken by creation order (older first).

PROOF_BOOST: the reference adds ``1/61`` to a reciprocal-rank-fusion score, where it is worth
about one rank position. Raw BM25 has no fixed scale, so an additive constant would mean
different things in different stores. Lexical recall applies it multiplicatively instead: a fact
backed by tool-use evidence scores ``score * (1 + PROOF_BOOST)`` (about +1.6%). That breaks
near-ties in favour of proven facts but never lets a weak match overtake a clearly better one.
The same factor is used in the SQL ``ORDER BY`` and in the returned score, so both agree.

A later hybrid ranker (cosine + BM25) should fuse the *unboosted* lexical ranking with the
cosine ranking by RRF and then add ``PROOF_BOOST`` once, as the reference does.
"""

from __future__ import annotations

import math

# FTS5's bm25() constants (fts5_aux.c): every BM25 ranker here scores with them.
K1 = 1.2
B = 0.75
PROOF_BOOST = 1.0 / 61.0
EVIDENCE_FACTOR = 1.0 + PROOF_BOOST


def idf(n: int, df: int) -> float:
    """A term's idf among ``n`` indexed facts, ``df`` of which hold it (FTS5's: clamped to
    ``1e-6`` when not positive, so a match never scores zero)."""
    value = math.log((n - df + 0.5) / (df + 0.5))
    return value if value > 0.0 else 1e-6


def length_norm(length: float, avgdl: float) -> float:
    """``k1 * (1 - b + b * dl / avgdl)`` for a fact of ``length`` tokens (the operations of
    ``lexical.pruning.length_norm``, on one float)."""
    return K1 * ((1.0 - B) + (B * length) / avgdl)


def term_score(idf_: float, tf: float, norm: float) -> float:
    """A term's contribution at ``tf`` in a fact of length norm ``norm`` (the operations of
    ``lexical.pruning.term_scores``, on one float)."""
    return idf_ * ((tf * (K1 + 1.0)) / (tf + norm))


def lexical_score(raw_bm25: float, has_evidence: bool) -> float:
    """The positive score of one FTS5 match (``raw_bm25`` is SQLite's negative ``bm25()``)."""
    score = -raw_bm25
    return score * EVIDENCE_FACTOR if has_evidence else score


def unit_score(score: float) -> float:
    """A positive score squashed into ``[0, 1)`` without changing order (for providers)."""
    return score / (1.0 + score) if score > 0 else 0.0
