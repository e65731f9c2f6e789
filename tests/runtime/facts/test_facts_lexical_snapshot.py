"""The lexical index saved beside the database: loaded when it matches, caught up when stale,
rebuilt when it does not match or is damaged, and never a wrong answer or a crash."""

from __future__ import annotations

import random
import shutil
from pathlib import Path

import pytest
from facts_support import FakeClock
from test_facts_lexical_index import QUERIES, fill_varied, fts5_ranking, ids_and_scores, now_ms

from specwire.runtime.facts.lexical.snapshot import snapshot_path
from specwire.runtime.facts.store import FactStore
from specwire.runtime.facts.tuning import FactsTuning

# Small stores that rank through the in-memory index and save it at close.
TUNING = FactsTuning(
    lexical_index_from=0, lexical_snapshot_min_facts=1, lexical_snapshot_min_changes=1
)


def assert_same_as_fts5(store: FactStore, clock: FakeClock) -> None:
    for query in QUERIES:
        for k in (3, 40):
            assert ids_and_scores(store.recall(query, k)) == ids_and_scores(
                fts5_ranking(store, query, k, now_ms(clock))
            ), (query, k)


def saved_store(db_path: Path, clock: FakeClock, n: int = 300) -> list[str]:
    with FactStore.open(db_path, now=clock, tuning=TUNING) as store:
        ids = fill_varied(store, random.Random(11), n)
        for fact_id in ids[:30]:
            store.forget_id(fact_id)
        store.recall("plan")
    assert snapshot_path(db_path).is_file()
    return ids


def loaded(store: FactStore) -> bool:
    assert store._lexical is not None
    return store._lexical.loaded_snapshot


def test_a_snapshot_is_saved_at_close_and_loaded_by_the_next_store(
    db_path: Path, clock: FakeClock
) -> None:
    saved_store(db_path, clock)
    assert snapshot_path(db_path).stat().st_mode & 0o777 == 0o600
    with FactStore.open(db_path, now=clock, tuning=TUNING) as store:
        assert_same_as_fts5(store, clock)
        assert loaded(store)


def test_a_stale_snapshot_is_caught_up_with_writes_made_since(
    db_path: Path, clock: FakeClock
) -> None:
    ids = saved_store(db_path, clock)
    # The writer never recalls: it saves no snapshot.
    with FactStore.open(db_path, now=clock, tuning=TUNING) as writer:
        fill_varied(writer, random.Random(12), 100)
        for fact_id in ids[30:60]:
            writer.forget_id(fact_id)
        writer.supersede(ids[70], "plan superseded Enterprise")
        new = writer.remember("a brand new kubernetes plan fact")
    with FactStore.open(db_path, now=clock, tuning=TUNING) as store:
        assert_same_as_fts5(store, clock)
        assert loaded(store)
        assert new.id in {hit.fact.id for hit in store.recall("kubernetes plan", 100)}
        returned = {hit.fact.id for query in QUERIES for hit in store.recall(query, 1000)}
        assert not returned & set(ids[:60])


def test_a_snapshot_of_another_database_is_ignored(
    tmp_path: Path, db_path: Path, clock: FakeClock
) -> None:
    other = tmp_path / "other" / "facts.sqlite3"
    saved_store(other, clock)
    with FactStore.open(db_path, now=clock, tuning=TUNING) as store:
        fill_varied(store, random.Random(99), 300)
    shutil.copy(snapshot_path(other), snapshot_path(db_path))
    with FactStore.open(db_path, now=clock, tuning=TUNING) as store:
        assert_same_as_fts5(store, clock)
        assert not loaded(store)


def test_a_database_behind_its_snapshot_rebuilds(db_path: Path, clock: FakeClock) -> None:
    saved_store(db_path, clock, n=50)
    kept = snapshot_path(db_path).read_bytes()
    db_path.unlink()
    for suffix in ("-wal", "-shm"):
        Path(f"{db_path}{suffix}").unlink(missing_ok=True)
    with FactStore.open(db_path, now=clock, tuning=TUNING) as store:
        fill_varied(store, random.Random(5), 20)
    snapshot_path(db_path).write_bytes(kept)
    with FactStore.open(db_path, now=clock, tuning=TUNING) as store:
        assert_same_as_fts5(store, clock)
        assert not loaded(store)


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
    else:  # a byte in the postings, which are checked per term when first used
        start = len(data) // 3
        for offset in range(start, start + 64):
            data[offset] ^= 0x5A
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("how", ["truncated", "empty", "garbage", "header", "postings"])
def test_a_damaged_snapshot_never_crashes_and_never_answers_wrong(
    db_path: Path, clock: FakeClock, how: str
) -> None:
    saved_store(db_path, clock)
    damage(snapshot_path(db_path), how)
    with FactStore.open(db_path, now=clock, tuning=TUNING) as store:
        assert_same_as_fts5(store, clock)
        store.remember("one more plan fact")
        assert_same_as_fts5(store, clock)
    with FactStore.open(db_path, now=clock, tuning=TUNING) as store:  # saved afresh, and sound
        assert_same_as_fts5(store, clock)


def test_a_frozen_vocabulary_finds_every_term_and_nothing_else() -> None:
    from specwire.runtime.facts.lexical.vocab import FrozenVocab

    terms = ["plan", "東京", "zürich", "a", "42", "plan2", "京都", "strasse"]
    vocab = FrozenVocab.of(terms)
    assert [vocab.lookup(term) for term in terms] == list(range(len(terms)))
    assert [vocab.lookup(term) for term in ("", "pla", "plan3", "zurich", "東")] == [None] * 5
    assert vocab.terms() == terms
    assert FrozenVocab.of([]).lookup("plan") is None and FrozenVocab.of([]).terms() == []
