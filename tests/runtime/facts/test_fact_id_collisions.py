"""A fresh fact id that is already taken (the rare 64-bit collision) is drawn again, for one
write and inside a batch, and a batch stays all-or-nothing when drawing again fails too."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator

import pytest

from specwire.runtime.core.errors import StoreError
from specwire.runtime.core.ids import new_memory_id
from specwire.runtime.facts.model import NewFactItem
from specwire.runtime.facts.sql import queries
from specwire.runtime.facts.store import FactStore


def ids_then_fresh(monkeypatch: pytest.MonkeyPatch, forced: list[str]) -> None:
    """The store's next ids are ``forced`` (in order), then fresh random ones."""
    pending: Iterator[str] = iter(forced)

    def next_id() -> str:
        return next(pending, None) or new_memory_id()

    monkeypatch.setattr(queries, "new_memory_id", next_id)


def count(store: FactStore, table: str) -> int:
    conn = sqlite3.connect(store.path)
    try:
        return int(conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0])
    finally:
        conn.close()


def test_remember_draws_a_taken_id_again(store: FactStore, monkeypatch: pytest.MonkeyPatch) -> None:
    first = store.remember("the invoice run starts on the first Monday")
    ids_then_fresh(monkeypatch, [first.id])
    second = store.remember("the warehouse closes at six")
    assert second.id != first.id
    assert store.get(second.id) is not None
    assert [hit.fact.id for hit in store.recall("warehouse")] == [second.id]


@pytest.mark.parametrize("taken", ["stored", "earlier in the batch"])
def test_retain_many_draws_a_taken_id_again_for_that_row_only(
    store: FactStore, monkeypatch: pytest.MonkeyPatch, taken: str
) -> None:
    old = store.remember("the invoice run starts on the first Monday")
    a, b = new_memory_id(), new_memory_id()
    clash = old.id if taken == "stored" else a
    ids_then_fresh(monkeypatch, [a, b, clash])
    texts = ["alpha ships on Tuesday", "bravo ships on Wednesday", "charlie ships on Friday"]
    facts = store.retain_many([NewFactItem(text) for text in [*texts, "delta ships on Sunday"]])
    assert [fact.id for fact in facts[:2]] == [a, b]
    assert facts[2].id not in {old.id, a, b}
    assert len({fact.id for fact in facts}) == 4
    for fact, text in zip(facts, [*texts, "delta ships on Sunday"], strict=True):
        stored = store.get(fact.id)
        assert stored is not None and stored.fact.text == text
    assert [hit.fact.id for hit in store.recall("charlie")] == [facts[2].id]
    assert count(store, "facts") == 5
    assert count(store, "facts_fts") == 5


def test_a_batch_whose_id_keeps_colliding_writes_nothing(
    store: FactStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    old = store.remember("the invoice run starts on the first Monday")
    ids_then_fresh(monkeypatch, [new_memory_id(), old.id, old.id, old.id])
    with pytest.raises(StoreError):
        store.retain_many([NewFactItem("alpha ships"), NewFactItem("bravo ships")])
    assert count(store, "facts") == 1
    assert count(store, "facts_fts") == 1
    monkeypatch.undo()
    store.retain_many([NewFactItem("alpha ships"), NewFactItem("bravo ships")])
    assert count(store, "facts") == 3
