"""Expired facts are swept in production: wiring starts a background sweep at most once an hour."""

from __future__ import annotations

import os
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from specwire.runtime.facts.store import FactStore
from specwire.runtime.facts.sweeping import stamp_path, sweep_if_due

START = datetime(2026, 1, 1, tzinfo=UTC)
HOUR_MS = 3_600_000


def test_wiring_sweeps_an_expired_fact_once_an_interval(tmp_path: Path) -> None:
    db = tmp_path / "facts" / "spec.sqlite3"
    with FactStore.open(db, now=lambda: START) as store:
        old = store.remember("a promo code that lapses", ttl_ms=HOUR_MS)
        kept = store.remember("a durable fact")
    later = START + timedelta(hours=2)
    lines: list[str] = []
    thread = sweep_if_due(db, lambda: later, lines.append)
    assert thread is not None
    thread.join(timeout=30)
    with FactStore.open(db, now=lambda: later) as store:
        status = store.get(old.id)
        assert status is not None and status.status == "expired"
        assert status.tombstone is not None and status.tombstone.kind == "expired"
        assert store.get(kept.id) is not None and store.get(kept.id).status == "live"  # type: ignore[union-attr]
    assert lines == ["[memory] swept 1 expired fact(s)\n"]
    assert stamp_path(db).is_file()
    # Not due again within the interval; due again once the stamp is old.
    assert sweep_if_due(db, lambda: later, lines.append) is None
    past = time.time() - 7200
    os.utime(stamp_path(db), (past, past))
    again = sweep_if_due(db, lambda: later, lines.append)
    assert again is not None
    again.join(timeout=30)


def test_nothing_is_created_for_a_store_that_does_not_exist(tmp_path: Path) -> None:
    db = tmp_path / "facts" / "spec.sqlite3"
    assert sweep_if_due(db, lambda: START, print) is None
    assert not (tmp_path / "facts").exists()


def test_wire_memory_runs_the_sweep(tmp_path: Path) -> None:
    from specwire.runtime.core.tool_types import ToolCatalog
    from specwire.runtime.wiring import MemoryDeps, wire_memory

    db = tmp_path / ".specwire" / "facts" / "spec.sqlite3"
    with FactStore.open(db, now=lambda: START) as store:
        old = store.remember("a promo code that lapses", ttl_ms=HOUR_MS)
    later = START + timedelta(hours=2)
    fragment = {"spec_name": "spec", "version": 2, "memory": {}}
    wired = wire_memory(
        fragment,
        MemoryDeps(catalog=ToolCatalog(), cwd=tmp_path, now=lambda: later, log=lambda _: None),
    )
    wired.close()
    deadline = time.monotonic() + 30
    while not stamp_path(db).exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    with FactStore.open(db, now=lambda: later) as store:
        status = store.get(old.id)
        assert status is not None and status.tombstone is not None
