"""Trash instead of deletes: clear, list, restore (fail-closed)."""

from __future__ import annotations

from pathlib import Path

import pytest
from continuity_support import Clock, make_store

from specwire.runtime.core.errors import StoreError


def test_clear_all_moves_files_into_a_timestamped_snapshot(tmp_path: Path) -> None:
    store = make_store(tmp_path)
    store.write_focus("f")
    store.create_plan("p", ["a"])
    store.write_goal("g")
    result = store.clear("all")
    assert result.snapshot is not None and result.snapshot.ts == "2026-03-01T09-30-00"
    trash = tmp_path / ".specwire" / "trash" / "2026-03-01T09-30-00"
    assert result.snapshot.path == trash.resolve()
    assert sorted(str(p.relative_to(trash)) for p in trash.rglob("*") if p.is_file()) == [
        "state/demo/focus.md",
        "state/demo/goals.yaml",
        "state/demo/plans/ACTIVE",
        "state/demo/plans/plan-0001-p.md",
    ]
    assert len(result.moved) == 3  # focus.md, plans/, goals.yaml
    assert store.read_focus() is not None and store.list_plans() == [] and store.list_goals() == []
    assert not store.focus_path.exists()


def test_clear_one_scope_leaves_the_others(tmp_path: Path) -> None:
    store = make_store(tmp_path)
    store.write_focus("f")
    store.create_plan("p")
    store.clear("plans")
    assert store.list_plans() == [] and store.focus_path.exists()


def test_clearing_nothing_creates_no_snapshot(tmp_path: Path) -> None:
    store = make_store(tmp_path)
    result = store.clear("goals")
    assert result.snapshot is None and result.moved == ()
    assert store.list_trash() == []


def test_snapshots_in_the_same_second_get_a_suffix(tmp_path: Path) -> None:
    store = make_store(tmp_path)
    store.write_focus("one")
    first = store.clear("focus")
    store.write_focus("two")
    second = store.clear("focus")
    store.write_focus("three")
    third = store.clear("focus")
    names = [s.ts for s in (first.snapshot, second.snapshot, third.snapshot) if s]
    assert names == ["2026-03-01T09-30-00", "2026-03-01T09-30-00-1", "2026-03-01T09-30-00-2"]
    assert [s.ts for s in store.list_trash()] == names


def test_restore_brings_files_back_and_removes_the_snapshot(tmp_path: Path) -> None:
    clock = Clock()
    store = make_store(tmp_path, clock=clock)
    store.write_focus("keep me")
    store.create_plan("p", ["a"])
    before = {p: p.read_bytes() for p in store.scope_dir.rglob("*") if p.is_file()}
    result = store.clear("all")
    assert result.snapshot is not None
    restored = store.restore(result.snapshot.ts)
    assert len(restored) == 3
    after = {p: p.read_bytes() for p in store.scope_dir.rglob("*") if p.is_file()}
    assert after == before
    assert not result.snapshot.path.exists() and store.list_trash() == []
    assert store.active_plan_id() == "plan-0001"


def test_restore_is_fail_closed_when_a_destination_exists(tmp_path: Path) -> None:
    store = make_store(tmp_path)
    store.write_focus("old")
    store.write_goal("g")
    result = store.clear("all")
    assert result.snapshot is not None
    store.write_focus("new")
    with pytest.raises(StoreError, match=r"refusing to restore .*state/demo/focus.md"):
        store.restore(result.snapshot.ts)
    doc = store.read_focus()
    assert doc is not None and doc.body == "new"
    assert not store.goals_path.exists()  # nothing moved, not even the files without a clash
    assert (result.snapshot.path / "state" / "demo" / "goals.yaml").exists()


@pytest.mark.parametrize("ts", ["../state", "2026-03-01", "nope", "2026-03-01T09-30-00/.."])
def test_restore_refuses_names_that_are_not_snapshots(tmp_path: Path, ts: str) -> None:
    store = make_store(tmp_path)
    with pytest.raises(StoreError):
        store.restore(ts)


def test_restore_of_an_unknown_snapshot(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="no trash snapshot"):
        make_store(tmp_path).restore("2026-03-01T09-30-00")


def test_a_plan_created_after_a_clear_never_reuses_a_trashed_plans_id(tmp_path: Path) -> None:
    store = make_store(tmp_path)
    store.create_plan("old", ["a"])
    store.create_plan("older", ["b"])
    store.clear("plans")
    plan, became_active = store.create_plan("new", ["c"])
    assert plan.id == "plan-0003" and became_active
    assert [p.id for p in store.list_plans()] == ["plan-0003"]
