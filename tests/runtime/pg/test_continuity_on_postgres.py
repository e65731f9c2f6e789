"""Continuity with ``memory.state: postgres``: the store keeps the same documents in the
database as on files (byte for byte), two workers mutating one plan serialize, the trash works
as on files, and nothing is written on disk."""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "continuity"))
from continuity_support import Clock, Logs  # noqa: E402
from state_support import (  # noqa: E402
    PostgresServerForTests,
    database_documents,
    file_documents,
    volume_on,
)

from specwire.runtime.continuity.store import ContinuityStore  # noqa: E402
from specwire.runtime.core.errors import StoreError  # noqa: E402
from specwire.runtime.core.paths import StoreLayout  # noqa: E402
from specwire.runtime.core.seams import HandoffInput, LedgerEntry  # noqa: E402
from specwire.runtime.pg.pool import open_pool  # noqa: E402

pytestmark = pytest.mark.postgres


@pytest.fixture
def pg() -> Iterator[Any]:
    uri = PostgresServerForTests.fresh_database()
    pool = open_pool(uri, max_size=8)
    yield pool
    pool.close()
    PostgresServerForTests.drop_database(uri)


def store_on(layout: StoreLayout, clock: Clock, volume: Any = None) -> ContinuityStore:
    return ContinuityStore(
        layout, proof_mode="off", now=clock, log=Logs(), volume=volume, lock_wait_s=30
    )


def exercise(store: ContinuityStore, clock: Clock) -> None:
    """A session's worth of changes, the same on either backend."""
    store.write_focus("ship the importer — ünïcode")
    store.record_requirements(
        [LedgerEntry(role="user", text="Use Postgres 16", session_id="sess_a", turn=1)]
    )
    plan, _ = store.create_plan("Import the ledger", ["parse", "load"])
    store.add_step(plan.id, "verify totals")
    store.set_step_status(plan.id, 1, "in_progress")
    store.prove_step(plan.id, 1)
    clock.advance(60)
    second, _ = store.create_plan("Second plan")
    store.set_active(second.id)
    goal = store.write_goal("Rows imported", target=100, current=10, unit="rows")
    store.update_goal(goal.id, current=40)
    store.write_handoff(HandoffInput(session_id="sess_a", stop_reason="end_turn", ledger=()))
    clock.advance(60)
    store.clear("goals")
    clock.advance(1)
    store.clear("focus")
    store.restore(store.list_trash()[-1].ts)


def test_the_database_holds_the_bytes_the_files_would(pg: Any, tmp_path: Path) -> None:
    files_clock, database_clock = Clock(), Clock()
    on_files = StoreLayout.for_cwd(tmp_path / "files", "demo")
    exercise(store_on(on_files, files_clock), files_clock)
    in_database = StoreLayout.for_cwd(tmp_path / "database", "demo")
    volume = volume_on(pg, in_database.root)
    exercise(store_on(in_database, database_clock, volume), database_clock)

    expected = file_documents(on_files.root)
    assert "state/demo/plans/plan-0001-import-the-ledger.md" in expected
    assert any(key.startswith("trash/") for key in expected)
    assert database_documents(volume) == expected
    assert not (tmp_path / "database").exists()  # nothing on disk


def test_a_second_worker_sees_the_first_ones_plan_and_goal(pg: Any, tmp_path: Path) -> None:
    first = store_on(
        StoreLayout.for_cwd(tmp_path / "a", "demo"),
        Clock(),
        volume_on(pg, StoreLayout.for_cwd(tmp_path / "a", "demo").root),
    )
    plan, became_active = first.create_plan("Shared plan", ["one"])
    goal = first.write_goal("Shared goal", target=3)
    assert became_active
    # Another folder, another volume object: only the database is shared.
    layout_b = StoreLayout.for_cwd(tmp_path / "b", "demo")
    second = store_on(layout_b, Clock(), volume_on(pg, layout_b.root))
    assert second.active_plan_id() == plan.id
    second.add_step(None, "two")
    second.update_goal(goal.id, current=2)
    assert [s.text for s in first.get_plan(plan.id).steps] == ["one", "two"]
    assert first.get_goal(goal.id).current == 2
    tail = first.render_continuity_tail()
    assert tail is not None and "Shared plan" in tail
    # Another tenant's spec of the same name sees none of it.
    other = store_on(layout_b, Clock(), volume_on(pg, layout_b.root, tenant="globex"))
    assert other.active_plan_id() is None and other.list_goals() == []


def test_two_workers_adding_steps_to_one_plan_lose_none(pg: Any, tmp_path: Path) -> None:
    layout = StoreLayout.for_cwd(tmp_path, "demo")
    plan, _ = store_on(layout, Clock(), volume_on(pg, layout.root)).create_plan("Race")
    errors: list[BaseException] = []

    def worker(name: str) -> None:
        store = store_on(layout, Clock(), volume_on(pg, layout.root))
        try:
            for i in range(12):
                store.add_step(plan.id, f"{name} {i}")
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(n,)) for n in ("alpha", "beta")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(180)
    assert not errors
    steps = [
        s.text
        for s in store_on(layout, Clock(), volume_on(pg, layout.root)).get_plan(plan.id).steps
    ]
    assert sorted(steps) == sorted(
        [f"alpha {i}" for i in range(12)] + [f"beta {i}" for i in range(12)]
    )


def test_the_trash_restores_fail_closed_and_ids_are_never_reused(pg: Any, tmp_path: Path) -> None:
    layout = StoreLayout.for_cwd(tmp_path, "demo")
    clock = Clock()
    store = store_on(layout, clock, volume_on(pg, layout.root))
    store.write_focus("first focus")
    first, _ = store.create_plan("First", ["a"])
    cleared = store.clear("all")
    assert cleared.snapshot is not None and len(cleared.moved) == 3  # focus, plan, ACTIVE
    assert store.list_plans() == [] and store.read_focus() is not None
    again = store.clear("all")
    assert again.snapshot is None  # nothing left to clear
    second, _ = store.create_plan("Second")
    assert second.id != first.id
    store.write_focus("new focus")
    with pytest.raises(StoreError, match="exist again"):
        store.restore(cleared.snapshot.ts)
    assert store.read_focus() is not None and "new focus" in store.read_focus().body  # type: ignore[union-attr]
    store.clear("focus")
    clock.advance(1)
    store.clear("plans")
    restored = store.restore(cleared.snapshot.ts)
    assert len(restored) == 3
    assert [p.title for p in store.list_plans()] == ["First"]
    assert store.active_plan_id() == first.id
    with pytest.raises(StoreError, match="no trash snapshot"):
        store.restore(cleared.snapshot.ts)


def test_memory_clear_names_the_snapshot_not_a_worker_folder(pg: Any, tmp_path: Path) -> None:
    """On the database nothing is under the worker's folder: the tool must not tell the model
    (and through it a tenant's user) to move files under the server's absolute path."""
    from specwire.runtime.continuity.tools import continuity_tools
    from specwire.runtime.core.tool_types import ToolContext

    layout = StoreLayout.for_cwd(tmp_path, "demo")
    store = store_on(layout, Clock(), volume_on(pg, layout.root))
    store.create_plan("Ship", ["a"])
    tools = {t.name: t for t in continuity_tools(store, "off", True)}
    result = tools["MemoryClear"].invoke(
        {"scope": "all", "justification": "fresh start"},
        ToolContext(session_id="sess_0123456789abcdef", tool_use_id="tu_1"),
    )
    assert not result.is_error
    assert str(tmp_path) not in result.text and "/" not in result.text.split("→", 1)[1]
    assert result.text == (
        "cleared: all (2 document(s)) → trash snapshot 2026-03-01T09-30-00\n"
        "undo: the owner restores it with `codegen memory continuity restore "
        "2026-03-01T09-30-00` (nothing was deleted; tell the user)"
    )
    assert not (tmp_path / ".specwire").exists()


@pytest.mark.parametrize("wire", ["wire_memory", "wire_continuity", "wire_wiki"])
def test_the_composition_root_puts_continuity_and_the_wiki_in_the_database(
    wire: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from specwire.runtime import wiring
    from specwire.runtime.core.tool_types import ToolCatalog
    from specwire.runtime.facts.providers.connect import close_shared_pools
    from specwire.runtime.pg.volume import PostgresVolume

    uri = PostgresServerForTests.fresh_database()
    monkeypatch.setenv("STATE_DSN", uri)
    fragment = {
        "spec_name": "demo",
        "version": 6,
        "memory": {"backend": "postgres", "dsn": "$STATE_DSN", "state": "postgres", "wiki": {}},
        "continuity": {"plan": True, "proof": "off", "ledger": True, "handoff": True},
    }
    try:
        deps = wiring.MemoryDeps(catalog=ToolCatalog(), cwd=tmp_path, log=Logs())
        wired = getattr(wiring, wire)(fragment, deps)
        assert wired is not None
        try:
            if wire != "wire_wiki":
                store = wired.stores.continuity
                assert isinstance(store.volume, PostgresVolume)
                store.create_plan("In the database", ["one"])
            if wire != "wire_continuity":
                wiki = wired.stores.wiki
                assert isinstance(wiki.folder.volume, PostgresVolume)
        finally:
            wired.close()
        assert not (tmp_path / ".specwire" / "state").exists()
        assert not (tmp_path / ".specwire" / "wiki").exists()
    finally:
        close_shared_pools()
        PostgresServerForTests.drop_database(uri)
