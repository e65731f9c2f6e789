"""The per-term depths of PostgreSQL's BM25 postings (``bm25._cut``), without a server: terms
taken rarest first, each read only to the length where it and the more common terms can still
beat the k-th fact found."""

from __future__ import annotations

from specwire.runtime.facts.lexical.ranking import EVIDENCE_FACTOR, idf, length_norm, term_score
from specwire.runtime.facts.providers.postgres import bm25

N, AVGDL = 100_000, 15.0


def _term(term: str, df: int, max_tf: int = 1) -> bm25.QueryTerm:
    return bm25.QueryTerm(term, idf(N, df), 0.0, df, max_tf)


def _upper(query: list[bm25.QueryTerm], held: set[str], dl: int) -> float:
    total = 0.0
    for t in query:
        part = (
            term_score(t.idf, float(t.max_tf), length_norm(float(dl), AVGDL))
            if t.term in held
            else 0.0
        )
        total = part if t is query[0] else total + part
    return total


def test_each_term_is_read_to_where_it_and_the_more_common_ones_can_win() -> None:
    # Query order is not rarity order: "the" first, the rarest last.
    query = [
        _term("the", 40_000),
        _term("kit", 9_000, 2),
        _term("atlas", 3_500),
        _term("coho", 1_800),
    ]
    low = _upper(query, {"kit", "atlas", "coho"}, 16)  # the k-th found: three terms, 16 tokens
    cut = bm25._cut({"avgdl": AVGDL}, query, 1, 0, [(low, 42)])
    assert cut["terms"] == ["the", "kit", "atlas", "coho"] and cut["kseq"] == 42
    gts, ges, pges = cut["gts"], cut["ges"], cut["pges"]
    # Rarest first: coho (all terms can follow it), atlas, kit, the (alone).
    after = {
        3: {"the", "kit", "atlas", "coho"},
        2: {"the", "kit", "atlas"},
        1: {"the", "kit"},
        0: {"the"},
    }
    for i, held in after.items():
        assert gts[i] == -1 or _upper(query, held, gts[i]) > low
        assert _upper(query, held, gts[i] + 1) <= low
        assert ges[i] == -1 or _upper(query, held, ges[i]) >= low
        assert _upper(query, held, ges[i] + 1) < low
        assert pges[i] == -1 or _upper(query, held, pges[i]) * EVIDENCE_FACTOR >= low
        assert _upper(query, held, pges[i] + 1) * EVIDENCE_FACTOR < low
    # Each term is read no deeper than a rarer one; the most common is not read at all.
    assert gts[3] >= gts[2] >= gts[1] >= gts[0] == -1
    assert gts[3] > 16 and gts[1] < 16


def test_a_term_this_rare_is_read_whole_and_without_a_kth_fact_everything_is() -> None:
    query = [_term("kit", 9_000), _term("coho", 40)]
    low = _upper(query, {"kit", "coho"}, 10)
    cut = bm25._cut({"avgdl": AVGDL}, query, 1, 50, [(low, 7)])
    assert cut["gts"][1] == cut["ges"][1] == cut["pges"][1] == bm25._NO_LIMIT
    assert cut["gts"][0] < bm25._NO_LIMIT
    everything = bm25._cut({"avgdl": AVGDL}, query, 2, 0, [(low, 7)])
    assert set(everything["gts"]) == set(everything["ges"]) == {bm25._NO_LIMIT}
