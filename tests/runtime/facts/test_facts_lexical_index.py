"""The in-memory lexical index ranks exactly as the FTS5 query does, and stays in step with the
database: this process's writes, another store's, another process's, tombstones and expiry."""

from __future__ import annotations

import random
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from facts_support import FakeClock

from specwire.runtime.facts.model import InvalidRequestError, NewFactItem, Provenance, RecallHit
from specwire.runtime.facts.sql import queries
from specwire.runtime.facts.store import FactStore
from specwire.runtime.facts.text import match_expression, query_terms
from specwire.runtime.facts.tuning import FactsTuning

WORDS = [
    "plan",
    "invoice",
    "renewal",
    "customer",
    "billing",
    "deploy",
    "kubernetes",
    "staging",
    "Lisbon",
    "Berlin",
    "Osaka",
    "Maria",
    "Chen",
    "Okafor",
    "Enterprise",
    "Starter",
    "seats",
    "overdue",
    "crashes",
    "export",
    "CSV",
    "Slack",
    "email",
    "morning",
    "evening",
    "2024",
    "42",
    "東京都",
    "京都",
    "Zürich",
    "Straße",
    "café",
]


# These stores are small: rank through the in-memory index anyway (it starts at 5,000).
TUNING = FactsTuning(lexical_index_from=0)


@pytest.fixture
def store(db_path: Path, clock: FakeClock) -> Iterator[FactStore]:
    with FactStore.open(db_path, now=clock, tuning=TUNING) as opened:
        yield opened


def fts5_ranking(store: FactStore, query: str, k: int, now_ms: int) -> list[RecallHit]:
    """The reference: today's FTS5 query (``queries.lexical``)."""
    match = match_expression(query_terms(query))
    assert match is not None
    with store._file.reading("recall") as conn:
        assert conn is not None
        return queries.lexical(conn, match, now_ms, limit=k)


def ids_and_scores(hits: list[RecallHit]) -> list[tuple[str, float]]:
    return [(hit.fact.id, hit.score) for hit in hits]


def indexed_recall(store: FactStore, query: str, k: int) -> list[RecallHit]:
    """``store.recall``, checked to have been answered by the index (not the FTS5 fallback)."""
    hits = store.recall(query, k)
    assert store._lexical is not None and store._lexical.index is not None
    return hits


def now_ms(clock: FakeClock) -> int:
    from specwire.runtime.facts.model import to_ms

    return to_ms(clock())


def fill_varied(store: FactStore, rng: random.Random, n: int) -> list[str]:
    """Random short facts: repeated words, exact duplicates (ties), evidence, tags, TTLs."""
    ids: list[str] = []
    for i in range(n):
        if ids and rng.random() < 0.1:
            text = store.get(rng.choice(ids)).fact.text  # type: ignore[union-attr]
        else:
            text = " ".join(rng.choice(WORDS) for _ in range(rng.randrange(1, 12)))
        evidence = ("toolu_1",) if rng.random() < 0.2 else ()
        tags = rng.sample(WORDS, rng.randrange(0, 3))
        ttl = rng.choice([None, None, None, 3_600_000, 7_200_000])
        fact = store.remember(
            f"{text} #{i % 7}" if rng.random() < 0.5 else text,
            tags,
            ttl_ms=ttl,
            provenance=Provenance("s1", evidence),
        )
        ids.append(fact.id)
    return ids


QUERIES = [
    "plan",
    "customer plan",
    "What is Maria Chen's plan?",
    "kubernetes deploy staging Berlin",
    "東京",
    "zurich strasse",
    "invoice overdue 2024 42",
    "café morning email Slack export",
    "nothing matches zeppelin",
]


@pytest.mark.parametrize("pruned", [False, True], ids=["every-posting", "pruned"])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_identical_ranking_to_fts5_with_ties_evidence_and_tombstones(
    db_path: Path, clock: FakeClock, seed: int, pruned: bool
) -> None:
    # Pruning starts at 20,000 postings and blocks hold 4,096 seqs; forced here on a small store.
    tuning = replace(
        TUNING,
        prune_min_postings=0 if pruned else 10**12,
        bound_min_postings=4,
        block_shift=4,
    )
    rng = random.Random(seed)
    with FactStore.open(db_path, now=clock, tuning=tuning) as store:
        ids = fill_varied(store, rng, 400)
        for fact_id in rng.sample(ids, 40):
            store.forget_id(fact_id)
        for fact_id in rng.sample(ids, 20):
            if store.get(fact_id).status == "live":  # type: ignore[union-attr]
                store.supersede(fact_id, "superseded " + rng.choice(WORDS))
        clock.advance(hours=1.5)  # some TTLs lapse, unswept
        for k in (1, 5, 50, 1000):
            for query in QUERIES:
                ours = indexed_recall(store, query, k)
                reference = fts5_ranking(store, query, k, now_ms(clock))
                assert ids_and_scores(ours) == ids_and_scores(reference), (query, k)
        store.sweep()
        clock.advance(hours=1)
        for query in QUERIES:
            assert ids_and_scores(indexed_recall(store, query, 50)) == ids_and_scores(
                fts5_ranking(store, query, 50, now_ms(clock))
            )


def test_ties_go_to_the_older_fact(store: FactStore) -> None:
    first = store.remember("the deploy target is Kubernetes")
    second = store.remember("the deploy target is Kubernetes")
    third = store.remember("The deploy target is kubernetes!")
    hits = store.recall("kubernetes deploy", 3)
    assert [hit.fact.id for hit in hits] == [first.id, second.id, third.id]
    assert len({hit.score for hit in hits}) == 1


def test_tombstoned_and_expired_facts_are_never_returned(
    store: FactStore, clock: FakeClock
) -> None:
    kept = store.remember("billing plan Enterprise")
    forgotten = store.remember("billing plan Starter")
    old = store.remember("billing plan Team")
    short = store.remember("billing plan Free", ttl_ms=60_000)
    assert len(store.recall("billing plan", 10)) == 4
    store.forget_id(forgotten.id)
    new = store.supersede(old.id, "billing plan Business")
    clock.advance(minutes=2)
    returned = {hit.fact.id for hit in store.recall("billing plan", 10)}
    assert returned == {kept.id, new.id}
    assert short.id not in returned
    store.sweep()
    assert {hit.fact.id for hit in store.recall("billing plan", 10)} == {kept.id, new.id}


def test_a_second_store_on_the_same_file_sees_every_write(db_path: Path, clock: FakeClock) -> None:
    with (
        FactStore.open(db_path, now=clock, tuning=TUNING) as writer,
        FactStore.open(db_path, now=clock, tuning=TUNING) as reader,
    ):
        a = writer.remember("the staging cluster runs in Osaka")
        assert [hit.fact.id for hit in reader.recall("staging Osaka")] == [a.id]
        b = writer.remember("the staging cluster moved to Lisbon")
        assert {hit.fact.id for hit in reader.recall("staging cluster")} == {a.id, b.id}
        writer.forget_id(a.id)
        assert [hit.fact.id for hit in reader.recall("staging cluster")] == [b.id]
        c = writer.supersede(b.id, "the staging cluster moved to Berlin")
        assert [hit.fact.id for hit in reader.recall("staging cluster")] == [c.id]
        assert ids_and_scores(reader.recall("staging cluster Berlin")) == ids_and_scores(
            fts5_ranking(reader, "staging cluster Berlin", 5, now_ms(clock))
        )


WRITER = """
import sys
from specwire.runtime.facts.store import FactStore
with FactStore.open(sys.argv[1]) as store:
    store.remember("the invoice for Northwind is overdue")
    for hit in store.recall("Contoso renewal", 5):
        store.forget_id(hit.fact.id)
"""


def test_writes_from_another_process_are_picked_up(db_path: Path) -> None:
    with FactStore.open(db_path, tuning=TUNING) as store:
        contoso = store.remember("Contoso renewal is due in March")
        kept = store.remember("the invoice for Fabrikam is paid")
        assert [hit.fact.id for hit in store.recall("Contoso renewal")] == [contoso.id]
        subprocess.run([sys.executable, "-c", WRITER, str(db_path)], check=True, timeout=60)
        assert store.recall("Contoso renewal") == []
        texts = [hit.fact.text for hit in store.recall("invoice overdue", 5)]
        assert texts[0] == "the invoice for Northwind is overdue"
        assert kept.id in {hit.fact.id for hit in store.recall("invoice", 5)}


def test_many_writes_merge_the_tail_and_keep_the_ranking(db_path: Path, clock: FakeClock) -> None:
    tuning = replace(TUNING, tail_merge_min=16)
    with FactStore.open(db_path, now=clock, tuning=tuning) as store:
        rng = random.Random(7)
        fill_varied(store, rng, 50)
        store.recall("plan")  # built now; the writes below go through the tail and its merges
        fill_varied(store, rng, 200)
        for query in QUERIES:
            assert ids_and_scores(indexed_recall(store, query, 20)) == ids_and_scores(
                fts5_ranking(store, query, 20, now_ms(clock))
            )


def test_numpy_loads_only_when_a_large_store_recalls(db_path: Path) -> None:
    code = (
        "import sys\n"
        "import specwire.runtime.wiring, specwire.runtime.facts.wiring\n"
        "from specwire.runtime.facts.store import FactStore\n"
        "from specwire.runtime.facts.tuning import FactsTuning\n"
        f"store = FactStore.open({str(db_path)!r})\n"
        "for n in range(3):\n"
        "    store.remember(f'numpy stays unloaded {n}')\n"
        "top = lambda store: [hit.fact.text for hit in store.recall('unloaded 1', 1)]\n"
        "assert top(store) == ['numpy stays unloaded 1']\n"
        "assert 'numpy' not in sys.modules, 'a small store loaded numpy'\n"
        f"large = FactStore.open({str(db_path)!r}, tuning=FactsTuning(lexical_index_from=3))\n"
        "assert top(large) == ['numpy stays unloaded 1']\n"
        "assert 'numpy' in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


def test_retain_many_writes_every_item_in_one_transaction(store: FactStore) -> None:
    written = store.retain_many(
        [
            NewFactItem("the deploy target is Kubernetes", ("infra",)),
            NewFactItem("Maria prefers email", ttl_ms=3_600_000),
            NewFactItem("Maria prefers email", provenance=Provenance("s1", ("toolu_9",))),
        ]
    )
    assert [fact.text for fact in written] == [
        "the deploy target is Kubernetes",
        "Maria prefers email",
        "Maria prefers email",
    ]
    assert written[1].expires_at is not None and written[2].has_evidence
    assert [hit.fact.id for hit in store.recall("kubernetes deploy")] == [written[0].id]
    assert store.size() == 3


def test_retain_many_with_a_bad_item_writes_nothing_and_names_it(store: FactStore) -> None:
    store.remember("already here")
    with pytest.raises(InvalidRequestError, match=r"item 2: memory text is too long.*nothing"):
        store.retain_many(
            [NewFactItem("fine one"), NewFactItem("fine two"), NewFactItem("x" * 5000)]
        )
    with pytest.raises(InvalidRequestError, match="item 1 is not a NewFactItem"):
        store.retain_many([NewFactItem("fine"), "not an item"])  # type: ignore[list-item]
    assert [status.fact.text for status in store.list_facts()] == ["already here"]
    assert store.recall("fine") == []


def test_retain_many_if_new_skips_live_texts_and_repeats(store: FactStore) -> None:
    old = store.remember("Maria prefers email")
    written = store.retain_many(
        [
            NewFactItem("maria  PREFERS email"),
            NewFactItem("Leo uses Slack"),
            NewFactItem("leo uses slack"),
        ],
        if_new=True,
    )
    assert [fact.text for fact in written] == ["Leo uses Slack"]
    assert {hit.fact.id for hit in store.recall("maria email")} == {old.id}


def test_a_bulk_import_by_another_store_is_indexed_by_a_rebuild(
    db_path: Path, clock: FakeClock
) -> None:
    tuning = replace(TUNING, lexical_rebuild_after=5)
    with (
        FactStore.open(db_path, now=clock, tuning=tuning) as writer,
        FactStore.open(db_path, now=clock, tuning=tuning) as reader,
    ):
        fill_varied(writer, random.Random(4), 20)
        reader.recall("plan")
        writer.retain_many([NewFactItem(f"bulk plan fact {i} Osaka") for i in range(60)])
        for query in QUERIES:
            assert ids_and_scores(indexed_recall(reader, query, 30)) == ids_and_scores(
                fts5_ranking(reader, query, 30, now_ms(clock))
            )


def test_catching_up_never_scans_the_facts_after_analyze(store: FactStore) -> None:
    from specwire.runtime.facts.lexical import recall as lexical_recall

    store.retain_many([NewFactItem(f"fact number {i}") for i in range(50)])
    store.recall("fact")
    with store._file.reading("plan") as conn:
        assert conn is not None
        conn.execute("ANALYZE")  # what PRAGMA optimize may run at close
        for sql in (lexical_recall._NEW_TOMBSTONES, lexical_recall._NEW_FACTS):
            plan = " | ".join(row[3] for row in conn.execute("EXPLAIN QUERY PLAN " + sql, (1,)))
            assert "SCAN" not in plan, plan
