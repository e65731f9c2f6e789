"""The cosine index saved beside the database: loaded when it matches, caught up when stale,
ignored when foreign or damaged, and never an answer different from a fresh build."""

from __future__ import annotations

import random
import shutil
import threading
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest
from facts_support import FakeClock
from test_facts_lexical_index import QUERIES, fill_varied, now_ms

from specwire.runtime.embedders import Embedder, load_embedder
from specwire.runtime.facts.store import FactStore
from specwire.runtime.facts.tuning import FactsTuning
from specwire.runtime.facts.vector.snapshot import snapshot_path

Answers = list[tuple[list[tuple[str, float]], list[int]]]


@pytest.fixture(autouse=True, params=["exact", "sketched"])
def scan(request: pytest.FixtureRequest) -> str:
    """Every test runs with exact scoring and again with a sketch pass (see ``tuning``)."""
    return str(request.param)


@pytest.fixture
def tuning(scan: str) -> FactsTuning:
    """Snapshots of tiny stores; under ``sketched``, a sketch pass that keeps only some rows as
    candidates (so a wrong sketch would change the answer)."""
    small = FactsTuning(vector_snapshot_min_rows=1, vector_snapshot_min_changes=1)
    if scan == "sketched":
        return replace(small, sketch_from_rows=1, sketch_pool=150, sketch_candidates=60)
    return small


class Renamed:
    """A real embedder under another id (and so a different model, as far as the store knows)."""

    def __init__(self, inner: Embedder, model_id: str) -> None:
        self.inner, self.id, self.dim = inner, model_id, inner.dim

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        return self.inner.embed(texts)


def hashing(dim: int = 64) -> Embedder:
    return load_embedder(f"hash/{dim}")


def answers(store: FactStore, clock: FakeClock) -> Answers:
    """Hybrid hits (ids, scores) and the raw cosine ranking, for every test query."""
    index = store._semantic_index()
    assert index is not None
    while index.pending(store._file):  # facts embedded lazily (a new embedder): all of them first
        store.recall("plan")
    out: Answers = []
    for query in QUERIES:
        hits = [(hit.fact.id, hit.score) for hit in store.recall(query, 10)]
        vector = index.embedder.embed([query])[0]
        out.append((hits, index.nearest(vector, now_ms(clock), 40)))
    return out


def fresh_answers(
    db_path: Path, clock: FakeClock, embedder: Embedder, tuning: FactsTuning
) -> Answers:
    """What an index built from SQLite alone answers (no snapshot read, none written)."""
    with FactStore.open(db_path, now=clock, embedder=embedder, tuning=tuning) as store:
        index = store._semantic_index()
        assert index is not None
        index._snapshot = None
        return answers(store, clock)


def loaded(store: FactStore) -> bool:
    index = store._semantic_index()
    assert index is not None
    return index.loaded_snapshot


def saved_store(
    db_path: Path, clock: FakeClock, embedder: Embedder, tuning: FactsTuning, n: int = 300
) -> list[str]:
    with FactStore.open(db_path, now=clock, embedder=embedder, tuning=tuning) as store:
        ids = fill_varied(store, random.Random(11), n)
        for fact_id in ids[:30]:
            store.forget_id(fact_id)
        store.recall("plan")
    assert snapshot_path(db_path).is_file()
    return ids


def test_a_snapshot_is_saved_at_close_and_answers_as_a_fresh_build(
    db_path: Path, clock: FakeClock, tuning: FactsTuning
) -> None:
    saved_store(db_path, clock, hashing(), tuning=tuning)
    assert snapshot_path(db_path).stat().st_mode & 0o777 == 0o600
    with FactStore.open(db_path, now=clock, embedder=hashing(), tuning=tuning) as store:
        got = answers(store, clock)
        assert loaded(store)
    assert got == fresh_answers(db_path, clock, hashing(), tuning=tuning)
    assert any(cosine for _, cosine in got)
    clock.advance(hours=1.5)  # some facts expire: masked in the loaded index too
    with FactStore.open(db_path, now=clock, embedder=hashing(), tuning=tuning) as store:
        got = answers(store, clock)
        assert loaded(store)
    assert got == fresh_answers(db_path, clock, hashing(), tuning=tuning)


def test_a_stale_snapshot_is_caught_up_with_writes_of_another_store(
    db_path: Path, clock: FakeClock, tuning: FactsTuning
) -> None:
    ids = saved_store(db_path, clock, hashing(), tuning=tuning)
    # The writer never recalls.
    with FactStore.open(db_path, now=clock, embedder=hashing(), tuning=tuning) as writer:
        fill_varied(writer, random.Random(12), 100)
        for fact_id in ids[30:60]:
            writer.forget_id(fact_id)
        writer.supersede(ids[70], "plan superseded Enterprise")
        new = writer.remember("a brand new kubernetes plan fact")
    # The BM25-only store writes a fact without a vector yet.
    with FactStore.open(db_path, now=clock, tuning=tuning) as bm25_only:
        bm25_only.remember("kubernetes plan written without an embedder")
    with FactStore.open(db_path, now=clock, embedder=hashing(), tuning=tuning) as store:
        got = answers(store, clock)
        assert loaded(store)
        returned = {hit.fact.id for query in QUERIES for hit in store.recall(query, 1000)}
        assert new.id in returned
        assert not returned & set(ids[:60])
    assert got == fresh_answers(db_path, clock, hashing(), tuning=tuning)
    # The store that read the snapshot and caught up saved a newer one: loaded, and up to date.
    with FactStore.open(db_path, now=clock, embedder=hashing(), tuning=tuning) as store:
        assert answers(store, clock) == got
        assert loaded(store)


def test_a_snapshot_of_another_embedder_is_ignored(
    db_path: Path, clock: FakeClock, tuning: FactsTuning
) -> None:
    saved_store(db_path, clock, hashing(), tuning=tuning)
    other = Renamed(hashing(), "test/other")
    with FactStore.open(db_path, now=clock, embedder=other, tuning=tuning) as store:
        got = answers(store, clock)
        assert not loaded(store)
    assert got == fresh_answers(db_path, clock, other, tuning=tuning)


def test_a_snapshot_of_another_dimension_is_ignored(
    db_path: Path, clock: FakeClock, tuning: FactsTuning
) -> None:
    saved_store(db_path, clock, Renamed(hashing(64), "test/same"), tuning=tuning)
    narrow = Renamed(hashing(32), "test/same")
    with FactStore.open(db_path, now=clock, embedder=narrow, tuning=tuning) as store:
        got = answers(store, clock)
        assert not loaded(store)
    assert got == fresh_answers(db_path, clock, narrow, tuning=tuning)


def test_a_snapshot_of_another_database_is_ignored(
    tmp_path: Path, db_path: Path, clock: FakeClock, tuning: FactsTuning
) -> None:
    other = tmp_path / "other" / "facts.sqlite3"
    saved_store(other, clock, hashing(), tuning=tuning)
    saved_store(db_path, clock, hashing(), n=200, tuning=tuning)
    shutil.copy(snapshot_path(other), snapshot_path(db_path))
    with FactStore.open(db_path, now=clock, embedder=hashing(), tuning=tuning) as store:
        got = answers(store, clock)
        assert not loaded(store)
    assert got == fresh_answers(db_path, clock, hashing(), tuning=tuning)


def damage(path: Path, how: str) -> None:
    data = bytearray(path.read_bytes())
    if how == "truncated":
        del data[len(data) // 2 :]
    elif how == "empty":
        data = bytearray()
    elif how == "garbage":
        data = bytearray(random.Random(3).randbytes(len(data)))
    elif how == "header":
        data[30] ^= 0xFF
    else:  # a byte of a vector: the matrix comes first, right after the header
        start = data.index(b"}\0") + 2
        start = -(-start // 64) * 64
        data[start + 4 * 64 * 5 + 1] ^= 0x5A  # row 5
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("how", ["truncated", "empty", "garbage", "header", "vector"])
def test_a_damaged_snapshot_is_ignored_and_recall_stays_right(
    db_path: Path, clock: FakeClock, how: str, scan: str, tuning: FactsTuning
) -> None:
    saved_store(db_path, clock, hashing(), tuning=tuning)
    expected = fresh_answers(db_path, clock, hashing(), tuning=tuning)
    damage(snapshot_path(db_path), how)
    with FactStore.open(db_path, now=clock, embedder=hashing(), tuning=tuning) as store:
        assert answers(store, clock) == expected
        if scan == "exact":  # every row is scored, so a damaged vector is found: rebuilt
            assert not loaded(store)
        store.remember("one more plan fact")
        expected_after = answers(store, clock)
    assert expected_after == fresh_answers(db_path, clock, hashing(), tuning=tuning)
    # Saved afresh, and sound.
    with FactStore.open(db_path, now=clock, embedder=hashing(), tuning=tuning) as store:
        assert answers(store, clock) == expected_after
        assert loaded(store)


def test_a_small_index_is_not_saved(db_path: Path, clock: FakeClock, tuning: FactsTuning) -> None:
    small_rows = replace(tuning, vector_snapshot_min_rows=1_000)
    with FactStore.open(db_path, now=clock, embedder=hashing(), tuning=small_rows) as store:
        fill_varied(store, random.Random(1), 50)
        store.recall("plan")
    assert not snapshot_path(db_path).exists()


def test_a_damaged_snapshot_found_under_the_store_lock_never_deadlocks(
    db_path: Path, clock: FakeClock, scan: str, tuning: FactsTuning
) -> None:
    # The cosine pass runs on a worker thread; rebuilding from the file needs the store's lock,
    # which a caller may hold (it is reentrant): the rebuild happens on the caller's thread.
    saved_store(db_path, clock, hashing(), tuning=tuning)
    expected = fresh_answers(db_path, clock, hashing(), tuning=tuning)
    damage(snapshot_path(db_path), "vector")
    done = threading.Event()
    got: list[Answers] = []
    with FactStore.open(db_path, now=clock, embedder=hashing(), tuning=tuning) as store:

        def recall_under_the_lock() -> None:
            with store._lock:
                got.append(answers(store, clock))
            done.set()

        threading.Thread(target=recall_under_the_lock, daemon=True).start()
        assert done.wait(30), "recall under the store's lock deadlocked"
    assert got == [expected]
