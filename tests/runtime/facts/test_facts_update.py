"""``FactStore.update``: an edit reaches every index as an append, in this process and in
another one that indexed the file before (the BM25 index, its snapshot, FTS5, the vectors), and
the schema refuses any other edit."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from specwire.runtime.core.errors import StoreError
from specwire.runtime.core.scopes import AGENT, ScopeKey
from specwire.runtime.facts.store import FactStore
from specwire.runtime.facts.tuning import FactsTuning

# Every recall through the in-memory BM25 index, snapshots saved at close.
INDEXED = FactsTuning(
    lexical_index_from=1, lexical_snapshot_min_facts=1, lexical_snapshot_min_changes=1
)


def texts(store: FactStore, query: str) -> list[str]:
    return [hit.fact.text for hit in store.recall(query, 10)]


@pytest.mark.parametrize("tuning", [INDEXED, FactsTuning()], ids=["bm25-index", "fts5"])
def test_another_store_on_the_file_sees_the_edit(tmp_path: Path, tuning: FactsTuning) -> None:
    path = tmp_path / "facts.sqlite3"
    with FactStore.open(path, tuning=tuning) as writer:
        fact = writer.remember("the office is in Berlin", ("place",))
        writer.remember("the cat is named Miso")
        with FactStore.open(path, tuning=tuning) as reader:
            assert texts(reader, "office Berlin") == ["the office is in Berlin"]
            updated, old_id = writer.update(fact.id, "the office is in Lisbon", ("place",))
            assert (updated.id, updated.created_at) == (fact.id, fact.created_at)
            assert old_id is not None
            # The reader indexed the old text: it catches the edit up as an append.
            assert texts(reader, "Berlin") == []
            assert [h.fact.id for h in reader.recall("office Lisbon", 10)] == [fact.id]
            assert texts(reader, "cat Miso") == ["the cat is named Miso"]
    # A store opened afterwards (from the saved snapshot, or rebuilt) agrees.
    with FactStore.open(path, tuning=tuning) as later:
        assert texts(later, "office") == ["the office is in Lisbon"]
        assert texts(later, "Berlin") == []
        old = later.get(old_id)
        assert old is not None and old.status == "superseded"
        assert old.fact.text == "the office is in Berlin"


def test_fts5_holds_exactly_the_live_facts_after_edits(tmp_path: Path) -> None:
    path = tmp_path / "facts.sqlite3"
    with FactStore.open(path) as store:
        fact = store.remember("first draft of the plan")
        for n in range(3):
            store.update(fact.id, f"draft {n + 2} of the plan")
        store.remember("an unrelated fact")
    conn = sqlite3.connect(path)
    indexed = conn.execute("SELECT rowid FROM facts_fts ORDER BY rowid").fetchall()
    live = conn.execute(
        "SELECT seq FROM facts f WHERE NOT EXISTS "
        "(SELECT 1 FROM tombstones t WHERE t.target = f.id) ORDER BY seq"
    ).fetchall()
    assert indexed == live and len(live) == 2
    history = conn.execute(
        "SELECT f.text, t.reason FROM facts f JOIN tombstones t ON t.target = f.id "
        "WHERE f.superseded_by = ? ORDER BY f.seq",
        (fact.id,),
    ).fetchall()
    assert history == [
        ("first draft of the plan", "updated"),
        ("draft 2 of the plan", "updated"),
        ("draft 3 of the plan", "updated"),
    ]
    conn.close()


def test_the_schema_refuses_any_other_edit(tmp_path: Path) -> None:
    path = tmp_path / "facts.sqlite3"
    with FactStore.open(path) as store:
        live = store.remember("the vpn host is gate")
        gone = store.remember("the old vpn host was door")
        store.forget_id(gone.id)
    conn = sqlite3.connect(path, isolation_level=None)
    for statement, args in (
        ("UPDATE facts SET text = 'x' WHERE id = ?", (live.id,)),  # not moved to a new seq
        ("UPDATE facts SET seq = seq - 1000, text = 'x' WHERE id = ?", (live.id,)),
        ("UPDATE facts SET seq = 9999, text = 'x' WHERE id = ?", (gone.id,)),  # dead
        ("UPDATE facts SET seq = 9999, created_at = 1 WHERE id = ?", (live.id,)),
        ("UPDATE facts SET seq = 9999, scope = 'crew' WHERE id = ?", (live.id,)),
    ):
        with pytest.raises(sqlite3.IntegrityError, match="immutable"):
            conn.execute(statement, args)
    conn.close()


def test_hybrid_recall_follows_the_edit(tmp_path: Path) -> None:
    from specwire.runtime.embedders import load_embedder

    path = tmp_path / "facts.sqlite3"
    embedder = load_embedder("hash/64")
    with FactStore.open(path, embedder=embedder) as store:
        fact = store.remember("the deploy window is Tuesday")
        store.remember("lunch is at noon")
        assert texts(store, "deploy window")[0] == "the deploy window is Tuesday"
        store.update(fact.id, "the deploy window is Thursday")
        assert texts(store, "deploy window")[0] == "the deploy window is Thursday"
        assert "the deploy window is Tuesday" not in texts(store, "deploy window Tuesday")
    conn = sqlite3.connect(path)
    vectors = conn.execute(
        "SELECT f.id, f.text FROM fact_vectors v JOIN facts f ON f.seq = v.fact_seq "
        "ORDER BY v.rowid"
    ).fetchall()
    # Each version keeps the vector of its own text.
    assert [text for _, text in vectors] == [
        "the deploy window is Tuesday",
        "lunch is at noon",
        "the deploy window is Thursday",
    ]
    conn.close()


def test_a_models_update_reaches_only_its_visible_plain_facts(tmp_path: Path) -> None:
    alice, bob = ScopeKey("user", "U_ALICE"), ScopeKey("user", "U_BOB")
    with FactStore.open(tmp_path / "facts.sqlite3") as store:
        fact = store.remember("alice's locker is 12", scope=alice)
        with pytest.raises(StoreError, match="no live memory"):
            store.update(fact.id, "alice's locker is 13", visible=(AGENT, bob))
        with pytest.raises(StoreError, match="no live memory"):
            store.update("mem_00000000000000ff", "nothing")
        assert [h.fact.text for h in store.recall("locker", 5, visible=(alice,))] == [
            "alice's locker is 12"
        ]


def test_the_history_moves_with_the_facts(tmp_path: Path) -> None:
    """What ``codegen memory migrate`` does: export, restore heads first, a second run writes
    nothing."""
    from specwire.runtime.facts.restoring import restore_order

    with FactStore.open(tmp_path / "a.sqlite3") as source:
        fact = source.remember("the office is in Berlin")
        source.update(fact.id, "the office is in Lisbon")
        source.update(fact.id, "the office is in Porto")
        exported = source.list_facts()
    with FactStore.open(tmp_path / "b.sqlite3") as target:
        assert target.restore_facts(restore_order(exported)) == 3
        assert target.restore_facts(restore_order(exported)) == 0
        by_id = {status.fact.id: status for status in target.list_facts()}
        assert by_id == {status.fact.id: status for status in exported}
        assert texts(target, "office") == ["the office is in Porto"]
        assert [h.fact.id for h in target.recall("office", 5)] == [fact.id]


def test_erasure_reaches_the_old_text_an_update_kept(tmp_path: Path) -> None:
    from specwire.runtime.erasure.erase import erase_subject
    from specwire.runtime.erasure.subject import Subject

    root = tmp_path / ".specwire"
    path = root / "facts" / "bot.sqlite3"
    path.parent.mkdir(parents=True)
    with FactStore.open(path) as store:
        fact = store.remember("the contact is Alice Smith")
        store.update(fact.id, "the contact is Bob")
    receipt = erase_subject(root, Subject.literal("Alice Smith"))
    assert receipt.tiers["facts"]["facts"] == 1 and receipt.verification.clean
    with FactStore.open(path) as store:
        assert [(s.fact.id, s.fact.text, s.status) for s in store.list_facts()] == [
            (fact.id, "the contact is Bob", "live")
        ]
        assert texts(store, "contact") == ["the contact is Bob"]


def test_the_router_updates_through_its_primary_only(tmp_path: Path) -> None:
    from specwire.runtime.facts.providers.protocol import (
        LocalFactProvider,
        RecallRequest,
        RetainRequest,
        UpdateRequest,
    )
    from specwire.runtime.facts.routing.router import FactRouter, RoutedProvider

    with (
        FactStore.open(tmp_path / "primary.sqlite3") as own,
        FactStore.open(tmp_path / "other.sqlite3") as other,
    ):
        primary, second = LocalFactProvider(own), LocalFactProvider(other)
        router = FactRouter(
            RoutedProvider("primary", "file", primary, 2.0),
            [RoutedProvider("second", "file", second, 2.0)],
        )
        assert router.capabilities().updates
        fact = router.retain(RetainRequest("the standup is at nine"))
        theirs = second.retain(RetainRequest("the retro is on Friday"))
        done = router.update(UpdateRequest(fact.id, "the standup is at ten"))
        assert done.id == fact.id
        hits = router.recall(RecallRequest("standup retro", 5)).hits
        assert sorted(hit.text for hit in hits) == [
            "the retro is on Friday",
            "the standup is at ten",
        ]
        # Another provider's fact is not the primary's to update.
        with pytest.raises(StoreError, match="no live memory"):
            router.update(UpdateRequest(theirs.id, "the retro is on Monday"))
