"""Exact top-k BM25 without scoring every posting: block-max and MaxScore pruning.

A query's common words carry most of its postings and little of any score. Two bounds let
recall skip most of their postings and still return exactly what scoring every posting returns:

- **Block-max.** Facts are numbered by ``seq``; the seq range is cut into blocks of
  ``2 ** block_shift`` seqs (``FactsTuning.block_shift``, 4,096 by default). For each common
  term, each block records the highest term frequency and the shortest fact among the term's
  postings there (``BlockStats``, computed once per term and cached by the index). A block's
  bound is the sum of its terms' BM25 contributions at those extremes. Recall scores the
  best-bounded blocks exactly first, which gives ``theta``, the ``limit``-th best live score; a
  block whose bound is below ``theta`` cannot hold a result and is skipped, and so is a block
  bounded by exactly ``theta`` that starts after the ``limit``-th fact (ties go to the older
  fact).
- **MaxScore.** Within the blocks left, a fact containing only terms whose bounds add up to less
  than ``theta`` cannot enter the result: candidates come from the other ("essential") terms,
  a candidate whose essential score plus the other terms' bounds stays below ``theta`` is
  dropped, and only the survivors are scored exactly.

Rare terms and postings added since the index was last merged are not bounded: their facts are
always scored. Every bound is computed with the same floating-point operations, in the same
order, as the score it bounds (each operation is monotone), so a bound is never below the score
and an exact tie is recognized as one. Scores are computed term by term in query order with the
exhaustive path's operations (``LexicalIndex.rank``), so the result is bit-identical to it — and
to FTS5's ``bm25()`` — including tie order. When pruning would not pay, the caller scores every
posting.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from specwire.runtime.facts.lexical.ranking import EVIDENCE_FACTOR, K1, B

# The default of ``FactsTuning.block_shift``: blocks of 4,096 seqs.
BLOCK_SHIFT = 12
BLOCK_SIZE = 1 << BLOCK_SHIFT  # seqs per block
# Pruning gives up (the caller scores every posting) past this share of all postings.
MAX_SCORED_SHARE = 0.6
# The two rarest terms seed the search when the rarest holds at most this share of all postings.
RAREST_SHARE = 0.25
# A candidate's bound mixes sums in another order than its score: kept on the safe side.
_SLACK = 1.0 + 1e-9

Seqs = npt.NDArray[np.int32]
Freqs = npt.NDArray[np.uint16]
Floats = npt.NDArray[np.float64]
Flags = npt.NDArray[np.bool_]
Blocks = npt.NDArray[np.int64]


@dataclass(frozen=True)
class BlockStats:
    """Per block holding some of a term's base postings: its id, the highest term frequency and
    the shortest fact (token count) among them."""

    blocks: Blocks
    max_tf: npt.NDArray[np.float64]
    min_len: npt.NDArray[np.float64]


def block_stats(
    seqs: Seqs, tfs: Freqs, doc_len: npt.NDArray[np.int32], shift: int = BLOCK_SHIFT
) -> BlockStats:
    """The statistics of a term's postings per block of ``2 ** shift`` seqs."""
    ids = seqs.astype(np.int64) >> shift
    starts = np.flatnonzero(np.concatenate([[True], ids[1:] != ids[:-1]]))
    return BlockStats(
        blocks=ids[starts],
        max_tf=np.maximum.reduceat(tfs, starts).astype(np.float64),
        min_len=np.minimum.reduceat(doc_len[seqs], starts).astype(np.float64),
    )


@dataclass(frozen=True)
class TermPostings:
    """One query term: its idf, its postings (ascending seq) and, for a common term, the block
    statistics of its first ``bounded`` postings (the rest were added since)."""

    idf: float
    seqs: Seqs
    tfs: Freqs
    stats: BlockStats | None = None
    bounded: int = 0


@dataclass(frozen=True)
class Corpus:
    """What scoring needs from the index besides the postings."""

    doc_len: npt.NDArray[np.int32]  # per seq
    proven: Flags  # per seq
    proven_blocks: Flags  # per block: holds a fact backed by evidence
    avgdl: float
    live: Callable[[Seqs], Flags]
    block_shift: int = BLOCK_SHIFT  # blocks of ``2 ** block_shift`` seqs, as the stats were made


def pruned_top(
    terms: Sequence[TermPostings], limit: int, corpus: Corpus, min_postings: int
) -> list[tuple[int, float]] | None:
    """The best ``limit`` live facts as ``(seq, score)``, best first; None when pruning would
    not pay (the caller then scores every posting): among others, below ``min_postings``
    postings in all (``FactsTuning.prune_min_postings``)."""
    total = sum(len(term.seqs) for term in terms)
    bounded = [term for term in terms if term.stats is not None]
    if total < min_postings or limit <= 0 or not bounded:
        return None
    n_blocks = (len(corpus.doc_len) >> corpus.block_shift) + 1
    bounds = _block_bounds(terms, n_blocks, corpus)
    always = [_unbounded_part(term) for term in terms]
    order = np.argsort(-bounds, kind="stable")
    likely = _in_two_rarest(terms, total)
    taken = min(4, n_blocks)
    while True:
        seed_blocks = np.zeros(n_blocks, dtype=np.bool_)
        seed_blocks[order[:taken]] = True
        seed = _candidates(terms, [*always, likely], seed_blocks, corpus)
        scores = _exact_scores(terms, seed, corpus)
        alive = corpus.live(seed)
        if int(np.count_nonzero(alive)) >= limit or taken >= n_blocks:
            break
        if taken * 4 > n_blocks:
            return None  # live matches are scarce: scoring every posting is cheaper
        taken *= 4
    top = _best(seed[alive], scores[alive], limit)
    if len(top) < limit:
        return top  # every block was scored: fewer live matches than limit
    theta, last_seq = top[-1][1], top[-1][0]
    starts = np.arange(n_blocks, dtype=np.int64) << corpus.block_shift
    # A block bounded by exactly theta matters only if it starts at or before the limit-th fact
    # (a tie goes to the older fact); that fact's own block is kept, wherever it was found.
    needed = (bounds > theta) | ((bounds == theta) & (starts <= last_seq)) | seed_blocks
    weak, reach = _weak_terms(terms, theta, corpus)
    strong = [term for index, term in enumerate(terms) if index not in weak]
    strong_always = [part for index, part in enumerate(always) if index not in weak]
    candidates = _candidates(strong, strong_always, needed, corpus)
    if len(candidates) > MAX_SCORED_SHARE * total:
        return None
    if weak:
        # MaxScore: a candidate whose strong terms plus every weak term's bound stay below
        # theta cannot enter the result.
        best_case = (_exact_scores(strong, candidates, corpus) + reach) * _SLACK
        best_case = np.where(corpus.proven[candidates], best_case * EVIDENCE_FACTOR, best_case)
        candidates = candidates[best_case >= theta]
    scores = _exact_scores(terms, candidates, corpus)
    alive = corpus.live(candidates)
    return _best(candidates[alive], scores[alive], limit)


def _in_two_rarest(terms: Sequence[TermPostings], total: int) -> Seqs:
    """The facts holding both of the query's two rarest terms: the best usually do, so scoring
    them first gives a high ``theta`` early (skipped when the rarest is not rare)."""
    if len(terms) < 2:
        return np.zeros(0, dtype=np.int32)
    first, second = sorted(terms, key=lambda term: len(term.seqs))[:2]
    if len(first.seqs) > total * RAREST_SHARE:
        return np.zeros(0, dtype=np.int32)
    _, present = _positions(second.seqs, first.seqs)
    return first.seqs[present]


def length_norm(length: Floats, avgdl: float) -> Floats:
    """``k1 * (1 - b + b * dl / avgdl)`` per fact of ``length`` tokens (float64)."""
    return K1 * ((1.0 - B) + (B * length) / avgdl)


def term_scores(idf: float, tf: Floats, norm: Floats) -> Floats:
    """A term's contribution at ``tf`` (float64) in facts of length norm ``norm``.

    Operation for operation as fts5_aux.c, so a score is bit-identical to ``bm25()``; every
    score and every bound here goes through this one expression, which is what makes a bound
    computed from larger ``tf`` and smaller ``norm`` never fall below a score.
    """
    return idf * ((tf * (K1 + 1.0)) / (tf + norm))


def _saturation(idf: float, tf: Floats, length: Floats, avgdl: float) -> Floats:
    """A term's contribution at ``tf`` in a fact of ``length`` tokens."""
    return term_scores(idf, tf, length_norm(length, avgdl))


def _block_bounds(terms: Sequence[TermPostings], n_blocks: int, corpus: Corpus) -> Floats:
    """Per block, the most a fact there can score from the bounded terms, summed in query order
    (as its score is), with the evidence factor where the block holds a proven fact."""
    bounds = np.zeros(n_blocks, dtype=np.float64)
    for term in terms:
        if term.stats is None:
            continue
        stats = term.stats
        part = np.zeros(n_blocks, dtype=np.float64)
        part[stats.blocks] = _saturation(term.idf, stats.max_tf, stats.min_len, corpus.avgdl)
        bounds = bounds + part
    return np.where(corpus.proven_blocks[:n_blocks], bounds * EVIDENCE_FACTOR, bounds)


def _unbounded_part(term: TermPostings) -> Seqs:
    """The postings no block bound covers: all of a rare term's, a common term's newest."""
    return term.seqs if term.stats is None else term.seqs[term.bounded :]


def _candidates(
    terms: Sequence[TermPostings], always: Sequence[Seqs], blocks: Flags, corpus: Corpus
) -> Seqs:
    """Distinct seqs, ascending: every unbounded posting, and the bounded terms' postings in
    the chosen blocks."""
    chosen = np.zeros(len(corpus.doc_len), dtype=np.bool_)
    for extra in always:
        chosen[extra] = True
    for term in terms:
        if term.stats is not None:
            base = term.seqs[: term.bounded]
            chosen[base[blocks[base >> corpus.block_shift]]] = True
    return np.flatnonzero(chosen).astype(np.int32)


def _weak_terms(
    terms: Sequence[TermPostings], theta: float, corpus: Corpus
) -> tuple[set[int], float]:
    """The weakest terms whose bounds add up (evidence factor included) to less than
    ``theta``, and that sum before the factor: a fact containing only these cannot reach it."""
    bound_of = [_term_bound(term, corpus) for term in terms]
    weak: set[int] = set()
    reach = 0.0
    for index in sorted(range(len(terms)), key=lambda index: bound_of[index]):
        if (reach + bound_of[index]) * EVIDENCE_FACTOR * _SLACK >= theta:
            break
        reach += bound_of[index]
        weak.add(index)
    return weak, reach


def _term_bound(term: TermPostings, corpus: Corpus) -> float:
    """The most the term adds to any fact's score (before the evidence factor)."""
    if term.stats is None or term.bounded < len(term.seqs):
        return float("inf")  # unbounded postings: never counted as weak
    stats = term.stats
    return float(np.max(_saturation(term.idf, stats.max_tf, stats.min_len, corpus.avgdl)))


def _exact_scores(terms: Sequence[TermPostings], seqs: Seqs, corpus: Corpus) -> Floats:
    """Each seq's BM25 score, term by term in query order with the exhaustive path's operations
    (a seq absent from a term's postings adds 0.0, which changes nothing)."""
    scores = np.zeros(len(seqs), dtype=np.float64)
    if len(seqs) == 0:
        return scores
    norm = length_norm(corpus.doc_len[seqs].astype(np.float64), corpus.avgdl)
    for term in terms:
        at, present = _positions(term.seqs, seqs)
        if len(at) == 0:
            continue
        tf = term.tfs[at].astype(np.float64)
        scores[present] += term_scores(term.idf, tf, norm[present])
    return np.where(corpus.proven[seqs], scores * EVIDENCE_FACTOR, scores)


def _positions(postings: Seqs, seqs: Seqs) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.intp]]:
    """Where the seqs found in ``postings`` are, in each (both ascending)."""
    if len(postings) == 0:
        empty = np.zeros(0, dtype=np.intp)
        return empty, empty
    if len(postings) <= len(seqs):
        found = np.searchsorted(seqs, postings)
        clipped = np.minimum(found, len(seqs) - 1)
        hit = seqs[clipped] == postings
        return np.flatnonzero(hit), clipped[hit]
    found = np.searchsorted(postings, seqs)
    clipped = np.minimum(found, len(postings) - 1)
    hit = postings[clipped] == seqs
    return clipped[hit], np.flatnonzero(hit)


def _best(seqs: Seqs, scores: Floats, limit: int) -> list[tuple[int, float]]:
    """By score descending, then seq ascending (``seqs`` are distinct and ascending)."""
    if len(scores) > limit:
        cut = float(-np.partition(-scores, limit - 1)[limit - 1])
        above = np.flatnonzero(scores > cut)
        tied = np.flatnonzero(scores == cut)[: limit - len(above)]
        chosen = np.concatenate([above, tied])
        seqs, scores = seqs[chosen], scores[chosen]
    order = np.lexsort((seqs, -scores))[:limit]
    return [(int(seqs[index]), float(scores[index])) for index in order.tolist()]
