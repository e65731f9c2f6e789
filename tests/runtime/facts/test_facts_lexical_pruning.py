"""Block-max and MaxScore pruning return exactly what scoring every posting returns: the same
facts, the same scores bit for bit, the same tie order — on corpora where pruning really skips
postings, with evidence, expiry, removed facts and postings added since the last merge."""

from __future__ import annotations

import random
from dataclasses import replace

import numpy as np
import pytest

from specwire.runtime.facts.lexical import pruning as lexical_pruning
from specwire.runtime.facts.lexical.index import LexicalIndex, NewDoc, build
from specwire.runtime.facts.tuning import FactsTuning

NOW = 1_000_000
# Every term of 8 postings or more bounded, and blocks of 64 seqs, so that a test-sized corpus
# has many blocks and prunes.
TUNING = FactsTuning(bound_min_postings=8, block_shift=6)


def zipf_docs(rng: random.Random, seqs: range) -> list[NewDoc]:
    vocab = [f"w{i}" for i in range(3000)]
    weights = [1.0 / (rank + 1) for rank in range(len(vocab))]
    docs = []
    for seq in seqs:
        words = rng.choices(vocab, weights, k=rng.randrange(1, 16))
        expires = rng.choice([None, None, None, NOW - 1, NOW + 1])
        docs.append(NewDoc(seq, " ".join(words), expires, rng.random() < 0.15))
    return docs


def ranked(index: LexicalIndex, terms: list[str], limit: int, *, prune: bool) -> object:
    saved = index.tuning
    index.tuning = replace(saved, prune_min_postings=0 if prune else 10**12)
    try:
        return index.rank(terms, limit, NOW)
    finally:
        index.tuning = saved


def pruned_share(index: LexicalIndex, terms: list[str], limit: int) -> float | None:
    """The share of all postings the pruned path scored, or None when it gave up."""
    scored: list[int] = []
    original = lexical_pruning._exact_scores

    def spy(terms: object, seqs: np.ndarray, corpus: object) -> np.ndarray:
        scored.append(len(seqs))
        return original(terms, seqs, corpus)  # type: ignore[arg-type]

    lexical_pruning._exact_scores = spy  # type: ignore[assignment]
    try:
        saved = index.tuning
        index.tuning = replace(saved, prune_min_postings=0)
        query = [index._lookup(term) for term in terms]
        total = sum(len(index.postings(tid)[0]) for tid in query if tid is not None)
        got = index.rank(terms, limit, NOW)
    finally:
        lexical_pruning._exact_scores = original  # type: ignore[assignment]
        index.tuning = saved
    assert got is not None
    return sum(scored) / total if scored and total else None


@pytest.mark.parametrize("seed", [1, 2])
def test_pruned_top_k_is_the_exhaustive_top_k(seed: int) -> None:
    rng = random.Random(seed)
    docs = zipf_docs(rng, range(1, 20_001))
    index = build(docs, TUNING)
    for doc in rng.sample(docs, 500):
        index.remove(doc.seq, doc.terms)
    index.add(zipf_docs(rng, range(20_001, 20_401)))  # a tail of new postings beside the base
    shares: list[float] = []
    for _ in range(120):
        common = [f"w{rng.randrange(0, 20)}" for _ in range(rng.randrange(1, 4))]
        rare = [f"w{rng.randrange(100, 3000)}" for _ in range(rng.randrange(0, 3))]
        terms = list(dict.fromkeys(rng.sample(common + rare, len(common + rare))))
        for limit in (1, 5, 20):
            exhaustive = ranked(index, terms, limit, prune=False)
            assert ranked(index, terms, limit, prune=True) == exhaustive, (terms, limit)
            share = pruned_share(index, terms, limit)
            if share is not None:
                shares.append(share)
    assert len(shares) > 200  # the comparison really ran the pruned path
    assert sorted(shares)[len(shares) // 2] < 0.5  # and it skipped most postings


def test_ties_keep_the_older_fact_first_when_pruned() -> None:
    docs = [
        NewDoc(seq, "common rare" if seq % 97 == 0 else "common filler", None, False)
        for seq in range(1, 30_001)
    ]
    index = build(docs, TUNING)
    for terms in (["rare", "common"], ["common"], ["filler", "common"]):
        top = ranked(index, terms, 5, prune=True)
        assert top == ranked(index, terms, 5, prune=False), terms
    assert [seq for seq, _ in ranked(index, ["common"], 3, prune=True)] == [1, 2, 3]  # type: ignore[attr-defined]
    share = pruned_share(index, ["filler", "common"], 5)
    assert share is not None and share < 0.05  # every block ties: all but the first skipped


def test_block_bounds_hold_for_every_fact() -> None:
    rng = random.Random(3)
    index = build(zipf_docs(rng, range(1, 5_001)), TUNING)
    avgdl = index.total_tokens / index.n_indexed
    for term in ("w0", "w5", "w50"):
        tid = index._lookup(term)
        assert tid is not None
        seqs, tfs = index.postings(tid)
        stats, bounded = index._block_stats(tid)
        assert stats is not None and bounded == len(seqs)
        posting = lexical_pruning.TermPostings(2.0, seqs, tfs, stats, bounded)
        corpus = lexical_pruning.Corpus(
            index._doc_len,
            index._proven,
            index._proven_by_block(),
            avgdl,
            lambda s: s > 0,
            TUNING.block_shift,
        )
        scores = lexical_pruning._exact_scores([posting], seqs, corpus)
        bounds = lexical_pruning._block_bounds([posting], int(stats.blocks.max()) + 1, corpus)
        assert np.all(scores <= bounds[seqs.astype(np.int64) >> TUNING.block_shift])


def test_the_limit_th_fact_at_the_start_of_its_block_is_kept() -> None:
    # Found by review: the fact setting theta came from the two rarest terms, outside the seed
    # blocks, at the first seq of a block bounded by exactly theta; that block must be scored.
    texts = {3: "w4", 28: "w4", 71: "w4", 76: "w3", 77: "w0", 99: "w3", 161: "w3", 182: "w4"}
    texts |= {183: "w0", 212: "w3", 213: "w0", 259: "w0", 263: "w0", 275: "w0", 302: "w4"}
    texts |= {328: "w0", 337: "w0", 354: "w0", 357: "w0", 358: "w0", 361: "w0", 366: "w0"}
    texts |= {402: "w3", 411: "w4", 414: "w3", 415: "w0", 420: "w3 w4 w0", 421: "w3 w1 w0"}
    texts |= {429: "w4"}
    docs = [NewDoc(seq, texts.get(seq, ""), None, False) for seq in range(1, 430)]
    index = build(docs, FactsTuning(bound_min_postings=2, block_shift=1))
    exhaustive = ranked(index, ["w4", "w0", "w3"], 1, prune=False)
    assert exhaustive == ranked(index, ["w4", "w0", "w3"], 1, prune=True)
    assert [seq for seq, _ in exhaustive] == [420]  # type: ignore[attr-defined]


def test_evidence_added_after_a_recall_still_bounds_its_block() -> None:
    # Blocks holding a proven fact get the evidence factor in their bound; a proven fact added
    # after the marks were made must mark its block (else the block could be skipped).
    docs = [NewDoc(seq, "common filler", None, False) for seq in range(1, 20_001)]
    index = build(docs, TUNING)
    index.add([NewDoc(20_001, "common filler", None, False)])  # room for more seqs
    assert ranked(index, ["common"], 3, prune=True) == ranked(index, ["common"], 3, prune=False)
    index.add([NewDoc(20_002, "common filler", None, True)])
    index._merge_tail()  # its postings join the bounded base
    for limit in (1, 3):
        top = ranked(index, ["common"], limit, prune=True)
        assert top == ranked(index, ["common"], limit, prune=False)
        assert [seq for seq, _ in top][0] == 20_002  # type: ignore[index]
