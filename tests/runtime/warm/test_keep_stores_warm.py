"""keep_stores_warm(): per-turn wiring borrows the fact store; without it, nothing changes."""

from __future__ import annotations

import threading
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

import specwire.runtime.facts.warm
from specwire.runtime.core.errors import MemoryServiceError
from specwire.runtime.core.paths import StoreLayout
from specwire.runtime.core.tenancy import Tenant, build_tenant
from specwire.runtime.core.tool_types import ToolCatalog
from specwire.runtime.facts.store import FactStore
from specwire.runtime.facts.warm import keep_stores_warm
from specwire.runtime.wiring import MemoryDeps, WiredMemory, wire_memory

SPEC = "concierge"
FRAGMENT: Mapping[str, Any] = {
    "spec_name": SPEC,
    "memory": {"auto_recall": True, "recall_k": 8},
    "continuity": {"plan": True, "proof": "require", "scope": "spec"},
}


def fixed_now() -> datetime:
    return datetime(2026, 7, 1, 12, 0, tzinfo=UTC)


def turn(tmp_path: Path, tenant: Tenant | None = None, session: str = "sess_a") -> WiredMemory:
    """What a per-turn host's ``build_turn`` does."""
    cwd = tenant.workspace if tenant is not None else tmp_path
    cwd.mkdir(parents=True, exist_ok=True)
    deps = MemoryDeps(
        catalog=ToolCatalog(),
        cwd=cwd,
        tenant=tenant,
        session_scope=session,
        home_dir=tmp_path / "home",
        log=lambda line: None,
        now=fixed_now,
    )
    return wire_memory(FRAGMENT, deps)


def recall(wired: WiredMemory, query: str) -> list[str]:
    seam = wired.options["memory"]
    assert seam.recall is not None
    return seam.recall(query, 8)


def test_without_the_pool_each_turn_opens_and_closes_its_store(tmp_path: Path) -> None:
    first = turn(tmp_path)
    first.stores.memory.remember("the billing plan is Enterprise")
    first.close()
    assert first.stores.memory.closed
    second = turn(tmp_path)
    assert second.stores.memory is not first.stores.memory
    assert recall(second, "billing plan") == ["the billing plan is Enterprise"]
    second.close()
    assert second.stores.memory.closed


def test_with_the_pool_turns_share_one_open_store(tmp_path: Path) -> None:
    with keep_stores_warm():
        first = turn(tmp_path)
        first.stores.memory.remember("the billing plan is Enterprise")
        first.close()
        first.close()
        assert not first.stores.memory.closed
        second = turn(tmp_path, session="sess_b")
        assert second.stores.memory is first.stores.memory
        assert recall(second, "billing plan") == ["the billing plan is Enterprise"]
        second.close()
    assert first.stores.memory.closed


def test_a_failed_wiring_gives_the_store_back(tmp_path: Path) -> None:
    fragment = {**FRAGMENT, "continuity": {**FRAGMENT["continuity"], "scope": "session"}}
    with keep_stores_warm():
        ok = turn(tmp_path)
        ok.close()
        deps = MemoryDeps(
            catalog=ToolCatalog(),
            cwd=tmp_path,
            home_dir=tmp_path / "home",
            log=lambda line: None,
            now=fixed_now,
        )
        with pytest.raises(MemoryServiceError, match="session_scope"):
            wire_memory(fragment, deps)  # borrowed the store, then continuity refused
    # Exiting closes idle stores at once; one still lent would stay open until given back.
    assert ok.stores.memory.closed


def test_nesting_keeps_the_pool_until_the_outermost_exit(tmp_path: Path) -> None:
    with keep_stores_warm(max_open=4):
        with keep_stores_warm(max_open=1):
            wired = turn(tmp_path)
            wired.close()
        assert not wired.stores.memory.closed
        again = turn(tmp_path)
        assert again.stores.memory is wired.stores.memory
        again.close()
    assert wired.stores.memory.closed
    assert specwire.runtime.facts.warm._active is None


def test_activations_from_several_threads_end_with_the_last_one(tmp_path: Path) -> None:
    entered = threading.Barrier(3, timeout=10)
    first_out = threading.Event()
    wired: list[WiredMemory] = []

    def serve(leave_first: bool) -> None:
        with keep_stores_warm():
            entered.wait()
            if not leave_first:
                first_out.wait(timeout=10)
                wired.append(turn(tmp_path))
                wired[-1].close()
        if leave_first:
            first_out.set()

    threads = [threading.Thread(target=serve, args=(first,)) for first in (True, False)]
    for thread in threads:
        thread.start()
    entered.wait()
    for thread in threads:
        thread.join()
    assert len(wired) == 1 and wired[0].stores.memory.closed
    assert specwire.runtime.facts.warm._active is None


def test_two_tenants_never_get_each_others_store(tmp_path: Path) -> None:
    base = tmp_path / "tenants"
    acme, globex = build_tenant("tenant-acme", base), build_tenant("tenant-globex", base)
    errors: list[BaseException] = []

    def turns(tenant: Tenant) -> None:
        try:
            for index in range(20):
                wired = turn(tmp_path, tenant, session=f"sess_{index}")
                try:
                    store = wired.stores.memory
                    assert store.path == StoreLayout(tenant.root, SPEC).facts_db
                    store.remember(f"{tenant.id} secret number {index}")
                    texts = recall(wired, "secret number")
                    assert texts and all(text.startswith(tenant.id) for text in texts)
                finally:
                    wired.close()
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    with keep_stores_warm(max_open=1):  # both tenants' stores churn through one slot
        threads = [threading.Thread(target=turns, args=(t,)) for t in (acme, globex, acme)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert errors == []
    for tenant, count in ((acme, 40), (globex, 20)):
        with FactStore.open(StoreLayout(tenant.root, SPEC).facts_db) as store:
            texts = [entry.fact.text for entry in store.list_facts()]
        assert len(texts) == count and all(text.startswith(tenant.id) for text in texts)


def test_concurrent_turns_on_one_store_lose_no_facts(tmp_path: Path) -> None:
    def turns(name: str) -> None:
        for index in range(25):
            wired = turn(tmp_path, session=f"sess_{name}")
            try:
                wired.stores.memory.remember(f"{name} fact {index}")
            finally:
                wired.close()

    with keep_stores_warm():
        threads = [threading.Thread(target=turns, args=(f"w{i}",)) for i in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    with FactStore.open(StoreLayout.for_cwd(tmp_path, SPEC).facts_db) as store:
        assert store.size() == 100


def test_bad_bounds_are_refused_before_anything_starts() -> None:
    with pytest.raises(ValueError, match="max_open"):
        keep_stores_warm(max_open=0)
    with pytest.raises(ValueError, match="idle_s"):
        keep_stores_warm(idle_s=-1)
    assert specwire.runtime.facts.warm._active is None
