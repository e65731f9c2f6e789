"""Hybrid recall: RRF of BM25 and cosine, its filters, its vectors and their embedder."""

from __future__ import annotations

import sqlite3
from dataclasses import replace
from fractions import Fraction
from pathlib import Path

import pytest
from facts_support import ConceptEmbedder, FakeClock

from specwire.runtime.facts.fusion import RRF_K, reciprocal_rank_fusion
from specwire.runtime.facts.lexical.ranking import PROOF_BOOST
from specwire.runtime.facts.model import Provenance
from specwire.runtime.facts.sql.queries import lexical
from specwire.runtime.facts.store import FactStore
from specwire.runtime.facts.text import match_expression, query_terms
from specwire.runtime.facts.tuning import FactsTuning

KUBE = "the deploy target is Kubernetes"


@pytest.fixture(autouse=True, params=["exact", "sketched"])
def cosine_scan(request: pytest.FixtureRequest) -> FactsTuning:
    """The tuning of every store: every test runs with every row scored exactly, and again
    through the sign-sketch first pass that big stores use (here it keeps every row as a
    candidate, so results are equal)."""
    if request.param == "sketched":
        return FactsTuning(sketch_from_rows=1)
    return FactsTuning()


def texts(store: FactStore, query: str, k: int = 5) -> list[str]:
    return [hit.fact.text for hit in store.recall(query, k)]


def vector_rows(path: Path) -> list[tuple[str, int]]:
    with sqlite3.connect(path) as conn:
        return conn.execute(
            "SELECT embedder, count(*) FROM fact_vectors GROUP BY embedder ORDER BY embedder"
        ).fetchall()


# -- fusion ------------------------------------------------------------------------------------


def test_rrf_order_on_a_hand_checked_example() -> None:
    lexical_ranking, cosine_ranking = ["a", "b", "c"], ["c", "d", "a"]
    # a: 1/61 + 1/63; c: 1/63 + 1/61 (a tie: a was seen first); b: 1/62; d: 1/62 (b first).
    fused = reciprocal_rank_fusion([lexical_ranking, cosine_ranking])
    assert [item for item, _ in fused] == ["a", "c", "b", "d"]
    expected = {"a": Fraction(1, 61) + Fraction(1, 63), "b": Fraction(1, 62)}
    scores = dict(fused)
    assert RRF_K == 60
    assert scores["a"] == pytest.approx(float(expected["a"]))
    assert scores["b"] == pytest.approx(float(expected["b"]))


def test_rrf_adds_the_proof_boost_once() -> None:
    fused = reciprocal_rank_fusion([["a", "b", "c"], ["c", "d", "a"]], proven={"d"})
    # d: 1/62 + 1/61 beats a and c (1/61 + 1/63).
    assert [item for item, _ in fused] == ["d", "a", "c", "b"]
    assert dict(fused)["d"] == pytest.approx(1 / 62 + PROOF_BOOST)


# -- without an embedder ------------------------------------------------------------------------


def test_without_an_embedder_recall_is_exactly_the_bm25_ranking(
    store: FactStore, db_path: Path
) -> None:
    store.remember("deploys go to Kubernetes on Fridays", ["ops"])
    store.remember("the billing plan is annual")
    store.remember("kubernetes clusters run in two regions")
    store.remember("we deploy on Fridays", provenance=Provenance("sess_0123456789abcdef", ("tu",)))
    query = "when do we deploy to kubernetes?"
    match = match_expression(query_terms(query))
    assert match is not None
    conn = sqlite3.connect(db_path)
    conn.row_factory = sqlite3.Row
    now = store._now_ms()
    assert store.recall(query, 3) == lexical(conn, match, now, limit=3)
    assert store.recall(query, 3) == store._lexical_ranking(query, 3)
    assert vector_rows(db_path) == []


# -- hybrid ------------------------------------------------------------------------------------


def test_hybrid_recall_finds_by_meaning_what_bm25_misses(
    db_path: Path, clock: FakeClock, cosine_scan: FactsTuning
) -> None:
    with FactStore.open(
        db_path, now=clock, embedder=ConceptEmbedder(), tuning=cosine_scan
    ) as store:
        store.remember(KUBE)
        store.remember("my cat is called Tom")
        assert store._lexical_ranking("container orchestration", 5) == []
        assert texts(store, "container orchestration") == [KUBE]
        assert vector_rows(db_path) == [("test/concepts", 2)]


def test_filters_hold_in_hybrid_mode(
    db_path: Path, clock: FakeClock, cosine_scan: FactsTuning
) -> None:
    with FactStore.open(
        db_path, now=clock, embedder=ConceptEmbedder(), tuning=cosine_scan
    ) as store:
        forgotten = store.remember("kubernetes runs the batch jobs")
        old = store.remember("k8s hosts the website")
        store.remember("kubernetes container for the cron", ttl_ms=3_600_000)
        store.remember("container orchestration is kubernetes")
        assert len(store.recall("kubernetes", 10)) == 4
        store.forget_id(forgotten.id)
        store.supersede(old.id, "the website moved to a static host")
        clock.advance(hours=2)
        assert texts(store, "kubernetes container orchestration", 10) == [
            "container orchestration is kubernetes"
        ]


def test_the_scope_is_the_store_file(
    tmp_path: Path, clock: FakeClock, cosine_scan: FactsTuning
) -> None:
    embedder = ConceptEmbedder()
    with FactStore.open(
        tmp_path / "a.sqlite3", now=clock, embedder=embedder, tuning=cosine_scan
    ) as a:
        a.remember(KUBE)
        with FactStore.open(
            tmp_path / "b.sqlite3", now=clock, embedder=embedder, tuning=cosine_scan
        ) as b:
            b.remember("my kitten sleeps")
            assert texts(b, "container orchestration") == []
            assert texts(a, "container orchestration") == [KUBE]


def test_evidence_backed_facts_get_the_boost(
    db_path: Path, clock: FakeClock, cosine_scan: FactsTuning
) -> None:
    with FactStore.open(
        db_path, now=clock, embedder=ConceptEmbedder(), tuning=cosine_scan
    ) as store:
        store.remember("kubernetes one")
        store.remember("kubernetes two", provenance=Provenance(None, ("toolu_1",)))
        hits = store.recall("kubernetes", 2)
        assert [hit.fact.text for hit in hits] == ["kubernetes two", "kubernetes one"]
        assert hits[0].score - hits[1].score > PROOF_BOOST / 2


def test_writes_from_a_second_store_on_the_same_file_are_seen(
    db_path: Path, clock: FakeClock, cosine_scan: FactsTuning
) -> None:
    with (
        FactStore.open(
            db_path, now=clock, embedder=ConceptEmbedder(), tuning=cosine_scan
        ) as reader,
        FactStore.open(
            db_path, now=clock, embedder=ConceptEmbedder(), tuning=cosine_scan
        ) as writer,
    ):
        writer.remember("my cat is called Tom")
        assert texts(reader, "container orchestration") == []
        fact = writer.remember(KUBE)
        assert texts(reader, "container orchestration") == [KUBE]
        writer.forget_id(fact.id)
        assert texts(reader, "container orchestration") == []


def test_a_failing_embedder_loses_no_fact(
    db_path: Path, clock: FakeClock, cosine_scan: FactsTuning
) -> None:
    embedder = ConceptEmbedder()
    lines: list[str] = []
    with FactStore.open(db_path, now=clock, tuning=cosine_scan) as store:
        store.use_embedder(embedder, log=lines.append)
        embedder.fail = True
        fact = store.remember(KUBE)
        store.remember("kubernetes is the deploy target, again")
        assert store.get(fact.id) is not None
        assert len(lines) == 1
        assert "test/concepts failed (the embedding service is down)" in lines[0]
        # Recall answers by BM25 meanwhile.
        assert texts(store, "kubernetes") == [KUBE, "kubernetes is the deploy target, again"]
        assert vector_rows(db_path) == []
        embedder.fail = False
        assert texts(store, "container orchestration") == [
            KUBE,
            "kubernetes is the deploy target, again",
        ]
        assert vector_rows(db_path) == [("test/concepts", 2)]


def test_changing_the_embedder_reembeds_lazily_and_never_mixes(
    db_path: Path, clock: FakeClock, cosine_scan: FactsTuning
) -> None:
    tuning = replace(cosine_scan, catch_up_batch=2)
    with FactStore.open(db_path, now=clock, embedder=ConceptEmbedder("v1"), tuning=tuning) as store:
        for n in range(5):
            store.remember(f"kubernetes cluster {n}")
    assert vector_rows(db_path) == [("test/v1", 5)]
    v2 = ConceptEmbedder("v2", dim=16)
    with FactStore.open(db_path, now=clock, embedder=v2, tuning=tuning) as store:
        # One batch of two facts is re-embedded per recall; v1's vectors are never read, so only
        # facts that have a v2 vector can come from the cosine side.
        assert texts(store, "container", 10) == ["kubernetes cluster 0", "kubernetes cluster 1"]
        assert vector_rows(db_path) == [("test/v1", 5), ("test/v2", 2)]
        assert len(texts(store, "container", 10)) == 4
        assert len(texts(store, "container", 10)) == 5
        assert vector_rows(db_path) == [("test/v1", 5), ("test/v2", 5)]
        embedded = [text for call in v2.calls for text in call if text != "container"]
        assert sorted(embedded) == [f"kubernetes cluster {n}" for n in range(5)]
        assert len(texts(store, "container", 10)) == 5
    # Back to v1: its vectors are still there, nothing is embedded again.
    v1 = ConceptEmbedder("v1")
    with FactStore.open(db_path, now=clock, embedder=v1, tuning=tuning) as store:
        assert len(texts(store, "container", 10)) == 5
        assert v1.calls == [["container"]]


def test_the_sketch_pass_finds_the_exact_neighbours_of_real_embeddings() -> None:
    import numpy as np

    from specwire.runtime.embedders import load_embedder
    from specwire.runtime.facts.vector.sketch import (
        SKETCH_BITS,
        differing_bits,
        projections,
        sketch,
    )

    embedder = load_embedder("hash/256")
    texts_ = [
        f"invoice {n} for customer {n % 97} is overdue since day {n % 31}" for n in range(3000)
    ]
    vectors = embedder.embed(texts_)
    planes = projections(256)
    sketches = sketch(vectors, planes)
    assert sketches.shape == (3000, SKETCH_BITS // 64)
    assert differing_bits(sketches[:1].T, sketches[:1]).tolist() == [0]
    query = embedder.embed(["overdue invoice for customer 42"])[0]
    exact = set(np.argsort(-(vectors @ query), kind="stable")[:5].tolist())
    distance = differing_bits(np.ascontiguousarray(sketches.T), sketch(query[None, :], planes))
    candidates = set(np.argsort(distance, kind="stable")[:300].tolist())
    # Approximate by design: the true best row, and most of the top 5, survive the first pass.
    assert 42 in candidates and len(exact & candidates) >= 4


def test_retain_many_embeds_its_batch_in_the_write(
    db_path: Path, clock: FakeClock, cosine_scan: FactsTuning
) -> None:
    from specwire.runtime.facts.model import NewFactItem

    with FactStore.open(
        db_path, now=clock, embedder=ConceptEmbedder(), tuning=cosine_scan
    ) as store:
        written = store.retain_many(
            [
                NewFactItem("the deploy target is Kubernetes"),
                NewFactItem("lunch is at noon"),
                NewFactItem("the deploy target is Kubernetes"),
            ],
            if_new=True,
        )
        assert [fact.text for fact in written] == [
            "the deploy target is Kubernetes",
            "lunch is at noon",
        ]
        # Vectors were written with the facts (no lazy embedding needed at recall).
        assert vector_rows(db_path) == [(ConceptEmbedder().id, 2)]
        assert texts(store, "container orchestration", k=1) == ["the deploy target is Kubernetes"]


def test_retain_many_with_a_failing_embedder_stores_the_batch(
    db_path: Path, clock: FakeClock, cosine_scan: FactsTuning
) -> None:
    from specwire.runtime.facts.model import NewFactItem

    embedder = ConceptEmbedder()
    with FactStore.open(db_path, now=clock, tuning=cosine_scan) as store:
        store.use_embedder(embedder, log=lambda line: None)
        embedder.fail = True
        written = store.retain_many([NewFactItem(KUBE), NewFactItem("my cat is called Tom")])
        assert len(written) == 2 and vector_rows(db_path) == []
        embedder.fail = False
        assert texts(store, "container orchestration", k=1) == [KUBE]  # embedded later


@pytest.mark.parametrize("rows, wanted", [(200_000, 2_000), (5_000, 60), (10, 10), (10, 3)])
def test_the_sketch_cuts_keep_the_best_rows_with_ties_to_the_older_row(
    rows: int, wanted: int
) -> None:
    import numpy as np

    from specwire.runtime.facts.vector.cuts import closest, largest

    rng = np.random.default_rng(rows)
    for distance in (
        np.clip(rng.normal(128, 10, rows), 0, 256).astype(np.uint16),
        rng.integers(0, 3, rows).astype(np.uint16),  # mostly ties
    ):
        expected = np.sort(np.lexsort((np.arange(rows), distance))[:wanted])
        assert closest(distance, wanted).tolist() == expected.tolist()
        values = distance.astype(np.float32)
        expected = np.sort(np.lexsort((np.arange(rows), -values))[:wanted])
        assert largest(values, wanted).tolist() == expected.tolist()


def test_an_index_out_of_step_with_the_file_never_answers(
    db_path: Path, clock: FakeClock, cosine_scan: FactsTuning
) -> None:
    """Rows removed underneath an open store (as an erasure in another process does): hybrid
    recall notices, rebuilds and never returns, nor ranks by, the removed fact."""
    with FactStore.open(
        db_path, now=clock, embedder=ConceptEmbedder(), tuning=cosine_scan
    ) as store:
        erased = store.remember("kubernetes secret plan")
        store.remember("kubernetes cluster")
        assert len(store.recall("kubernetes secret plan", 5)) == 2
        with sqlite3.connect(db_path) as conn:
            conn.execute("PRAGMA foreign_keys = ON")
            conn.execute("DROP TRIGGER facts_never_deleted")
            seq = conn.execute("SELECT seq FROM facts WHERE id = ?", (erased.id,)).fetchone()[0]
            conn.execute("DELETE FROM fact_vectors WHERE fact_seq = ?", (seq,))
            conn.execute("DELETE FROM facts_fts WHERE rowid = ?", (seq,))
            conn.execute("DELETE FROM facts WHERE id = ?", (erased.id,))
        assert texts(store, "kubernetes secret plan") == ["kubernetes cluster"]
        assert store._lexical is not None and store._lexical.index is not None  # rebuilt
        assert [seq for seq, _ in store._lexical_seqs("secret plan", 5) or []] == []
