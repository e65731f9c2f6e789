"""Lazy creation: nothing exists on disk until the first fact is written."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from facts_support import FakeClock

from specwire.runtime.core.errors import StoreError
from specwire.runtime.facts.providers.protocol import LocalFactProvider
from specwire.runtime.facts.sql.schema import SCHEMA_VERSION
from specwire.runtime.facts.store import FactStore


def tree(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


def test_reads_and_no_op_writes_on_a_missing_store_create_nothing(
    tmp_path: Path, clock: FakeClock
) -> None:
    path = tmp_path / "a" / "b" / "spec.sqlite3"
    with FactStore.open(path, now=clock) as store:
        assert store.recall("anything") == []
        assert store.size() == 0
        assert store.list_facts() == []
        assert store.get("mem_0123456789abcdef") is None
        assert store.find_same_text("anything") is None
        assert store.schema_version == 0
        sweep = store.sweep()
        assert (sweep.swept, sweep.live) == (0, 0)
        assert store.forget("anything") == []
        assert store.forget("mem_0123456789abcdef") == []
        with pytest.raises(StoreError, match="no memory with id mem_0123456789abcdef"):
            store.supersede("mem_0123456789abcdef", "new text")
        health = LocalFactProvider(store).health()
        assert (health.ok, health.message) == (True, None)
        assert tree(tmp_path) == []
        fact = store.remember("the first fact creates the file")
        assert path.is_file() and store.schema_version == SCHEMA_VERSION
        assert [h.fact for h in store.recall("first fact")] == [fact]
    assert tree(tmp_path) != []


def test_a_file_created_by_another_process_is_picked_up(tmp_path: Path) -> None:
    path = tmp_path / "spec.sqlite3"
    with FactStore.open(path) as reader, FactStore.open(path) as writer:
        assert reader.size() == 0 and not path.exists()
        fact = writer.remember("written elsewhere")
        assert [h.fact for h in reader.recall("elsewhere")] == [fact]
        assert reader.forget(fact.id) == [fact]
        assert writer.size() == 0


def test_health_reports_a_store_that_could_not_be_created(tmp_path: Path) -> None:
    path = tmp_path / "facts" / "spec.sqlite3"
    with FactStore.open(path) as store:
        (tmp_path / "facts").write_text("a file where the directory should be")
        health = LocalFactProvider(store).health()
        assert not health.ok and health.message is not None
        assert health.message.startswith("the fact store cannot be created: ")
        assert health.message.endswith("facts is not a directory")
        with pytest.raises(StoreError, match="cannot create the fact store"):
            store.remember("nowhere to go")
        assert store.recall("nowhere") == []


def test_open_refuses_a_store_under_a_read_only_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    locked = tmp_path / "locked"
    locked.mkdir()
    real_access = os.access

    def access(path: Any, mode: int) -> bool:  # as if locked were mode 0500 (root or not)
        return False if Path(str(path)) == locked and mode & os.W_OK else real_access(path, mode)

    with FactStore.open(locked / "spec.sqlite3") as store:
        monkeypatch.setattr(os, "access", access)
        health = LocalFactProvider(store).health()
        assert not health.ok and health.message == (
            f"the fact store cannot be created: {locked} is not writable"
        )
        for path in (locked / "spec.sqlite3", locked / "facts" / "spec.sqlite3"):
            with pytest.raises(
                StoreError, match=r"cannot create the fact store at .*: .* is not writable"
            ):
                FactStore.open(path)
    assert tree(locked) == []


def test_a_closed_store_that_was_never_created_still_refuses_work(tmp_path: Path) -> None:
    store = FactStore.open(tmp_path / "spec.sqlite3")
    store.close()
    assert store.closed
    with pytest.raises(StoreError, match="closed"):
        store.recall("x")
    with pytest.raises(StoreError, match="closed"):
        store.remember("x")
    assert tree(tmp_path) == []
