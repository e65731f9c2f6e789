"""HostResources: the host lends its fact store pool to every turn; without one, nothing is shared.

Per-turn wiring (``wire_memory`` with ``MemoryDeps.resources``) borrows the fact store from the
pool the host built, and gives it back; without a pool each turn opens and closes its own store.
The pool belongs to whoever built it: two pools never share a store, and closing one closes its
stores only.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from specwire.runtime.core.errors import MemoryServiceError
from specwire.runtime.core.paths import StoreLayout
from specwire.runtime.core.tenancy import Tenant, build_tenant
from specwire.runtime.core.tool_types import ToolCatalog
from specwire.runtime.facts.pool import FactStorePool
from specwire.runtime.facts.store import FactStore
from specwire.runtime.hosts.channel import serve_channel
from specwire.runtime.hosts.managed import serve_managed
from specwire.runtime.hosts.resources import host_resources
from specwire.runtime.hosts.types import TenantConfig, TurnSetup
from specwire.runtime.wiring import HostResources, MemoryDeps, WiredMemory, wire_memory

SPEC = "concierge"
FRAGMENT: Mapping[str, Any] = {
    "spec_name": SPEC,
    "memory": {"auto_recall": True, "recall_k": 8},
    "continuity": {"plan": True, "proof": "require", "scope": "spec"},
}
LONG_IDLE_S = 3600.0


def fixed_now() -> datetime:
    return datetime(2026, 7, 1, 12, 0, tzinfo=UTC)


def host_now() -> datetime:
    return datetime(2031, 1, 2, 3, 4, tzinfo=UTC)


@pytest.fixture
def pool() -> Iterator[FactStorePool]:
    built = FactStorePool(max_open=8, idle_s=LONG_IDLE_S)
    try:
        yield built
    finally:
        built.close()


def turn(
    tmp_path: Path,
    resources: HostResources | None = None,
    tenant: Tenant | None = None,
    session: str = "sess_a",
    now: Any = fixed_now,
) -> WiredMemory:
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
        now=now,
        resources=resources,
    )
    return wire_memory(FRAGMENT, deps)


def recall(wired: WiredMemory, query: str) -> list[str]:
    seam = wired.options["memory"]
    assert seam.recall is not None
    return seam.recall(query, 8)


@pytest.mark.parametrize("resources", [None, HostResources()], ids=["no-resources", "no-pool"])
def test_without_a_pool_each_turn_opens_and_closes_its_store(
    tmp_path: Path, resources: HostResources | None
) -> None:
    first = turn(tmp_path, resources)
    first.stores.memory.remember("the billing plan is Enterprise")
    first.close()
    assert first.stores.memory.closed
    second = turn(tmp_path, resources)
    assert second.stores.memory is not first.stores.memory
    assert recall(second, "billing plan") == ["the billing plan is Enterprise"]
    second.close()
    assert second.stores.memory.closed


def test_a_store_borrowed_across_two_turns_is_the_same_open_store(
    tmp_path: Path, pool: FactStorePool
) -> None:
    resources = HostResources(fact_stores=pool)
    first = turn(tmp_path, resources)
    first.stores.memory.remember("the billing plan is Enterprise")
    first.close()
    first.close()
    assert not first.stores.memory.closed
    second = turn(tmp_path, resources, session="sess_b")
    assert second.stores.memory is first.stores.memory
    assert recall(second, "billing plan") == ["the billing plan is Enterprise"]
    second.close()
    assert pool.pooled_paths() == [StoreLayout.for_cwd(tmp_path, SPEC).facts_db.resolve()]
    pool.close()
    assert first.stores.memory.closed


def test_the_pool_closes_a_store_still_lent_when_its_turn_gives_it_back(
    tmp_path: Path, pool: FactStorePool
) -> None:
    lent = turn(tmp_path, HostResources(fact_stores=pool))
    pool.close()
    assert not lent.stores.memory.closed  # never closed under a turn still running
    lent.close()
    assert lent.stores.memory.closed


def test_two_pools_never_share_a_store(tmp_path: Path, pool: FactStorePool) -> None:
    with host_resources(max_open=4, idle_s=LONG_IDLE_S) as other:
        mine = turn(tmp_path, HostResources(fact_stores=pool))
        theirs = turn(tmp_path, other, session="sess_b")
        assert mine.stores.memory is not theirs.stores.memory
        mine.close()
        theirs.close()
    assert theirs.stores.memory.closed
    assert not mine.stores.memory.closed  # the other host's exit closes its own stores only


def test_a_failed_wiring_gives_the_store_back(tmp_path: Path, pool: FactStorePool) -> None:
    resources = HostResources(fact_stores=pool)
    fragment = {**FRAGMENT, "continuity": {**FRAGMENT["continuity"], "scope": "session"}}
    ok = turn(tmp_path, resources)
    ok.close()
    deps = MemoryDeps(
        catalog=ToolCatalog(),
        cwd=tmp_path,
        home_dir=tmp_path / "home",
        log=lambda line: None,
        now=fixed_now,
        resources=resources,
    )
    with pytest.raises(MemoryServiceError, match="session_scope"):
        wire_memory(fragment, deps)  # borrowed the store, then continuity refused
    pool.close()
    # Closing closes idle stores at once; one still lent would stay open until given back.
    assert ok.stores.memory.closed


def test_the_hosts_clock_stamps_facts_unless_the_deps_name_their_own(
    tmp_path: Path, pool: FactStorePool
) -> None:
    resources = HostResources(fact_stores=pool, clock=host_now)
    wired = turn(tmp_path, resources, now=None)
    try:
        wired.stores.memory.remember("stamped by the host's clock")
    finally:
        wired.close()
    explicit = turn(tmp_path, resources, now=fixed_now)
    try:
        assert explicit.stores.memory is not wired.stores.memory  # lent per (path, clock)
        explicit.stores.memory.remember("stamped by the turn's own clock")
    finally:
        explicit.close()
    pool.close()
    with FactStore.open(StoreLayout.for_cwd(tmp_path, SPEC).facts_db) as store:
        stamps = {entry.fact.text: entry.fact.created_at for entry in store.list_facts()}
    assert stamps == {
        "stamped by the host's clock": host_now(),
        "stamped by the turn's own clock": fixed_now(),
    }


def test_two_tenants_never_get_each_others_store(tmp_path: Path) -> None:
    base = tmp_path / "tenants"
    acme, globex = build_tenant("tenant-acme", base), build_tenant("tenant-globex", base)
    errors: list[BaseException] = []

    def turns(tenant: Tenant, resources: HostResources) -> None:
        try:
            for index in range(20):
                wired = turn(tmp_path, resources, tenant, session=f"sess_{index}")
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

    # Both tenants' stores churn through one slot.
    with host_resources(max_open=1, idle_s=LONG_IDLE_S) as resources:
        threads = [
            threading.Thread(target=turns, args=(t, resources)) for t in (acme, globex, acme)
        ]
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
    def turns(name: str, resources: HostResources) -> None:
        for index in range(25):
            wired = turn(tmp_path, resources, session=f"sess_{name}")
            try:
                wired.stores.memory.remember(f"{name} fact {index}")
            finally:
                wired.close()

    with host_resources() as resources:
        threads = [threading.Thread(target=turns, args=(f"w{i}", resources)) for i in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    with FactStore.open(StoreLayout.for_cwd(tmp_path, SPEC).facts_db) as store:
        assert store.size() == 100


def test_bad_bounds_are_refused_before_anything_starts() -> None:
    with pytest.raises(ValueError, match="max_open"), host_resources(max_open=0):
        pytest.fail("entered with max_open=0")
    with pytest.raises(ValueError, match="idle_s"), host_resources(idle_s=-1):
        pytest.fail("entered with idle_s=-1")


# -- the hosts: one pool per process, lent to every turn, closed when the host stops ----------


def test_the_channel_host_lends_one_pool_to_every_turn_and_closes_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SPECWIRE_MODEL", raising=False)
    monkeypatch.delenv("SPECWIRE_SCRIPT", raising=False)
    lent: list[HostResources] = []
    stores: list[FactStore] = []

    def build_turn(session_id: str, resources: HostResources) -> TurnSetup:
        lent.append(resources)
        catalog = ToolCatalog()
        wired = turn(tmp_path, resources, session=session_id, now=None)
        stores.append(wired.stores.memory)
        assert not wired.stores.memory.closed
        return TurnSetup(catalog, wired.options, close=wired.close)

    code = serve_channel(
        spec_name=SPEC,
        model="scripted",
        instructions="x",
        channels=[],
        session_key="thread",
        build_turn=build_turn,
        root=tmp_path,
        argv=["--message", "t1: hello", "--message", "t2: hi", "--message", "t1: again"],
    )
    assert code == 0
    assert len(lent) == 3 and all(resources is lent[0] for resources in lent)
    assert lent[0].fact_stores is not None
    assert stores[1] is stores[0] and stores[2] is stores[0]  # one open store for every turn
    assert stores[0].closed  # the host closed its pool on the way out


def test_the_managed_host_lends_one_pool_to_every_tenants_turn_and_closes_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SPECWIRE_MODEL", raising=False)
    monkeypatch.delenv("SPECWIRE_SCRIPT", raising=False)
    monkeypatch.delenv("SPECWIRE_TENANTS_ROOT", raising=False)
    stores: dict[str, list[FactStore]] = {}

    def build_turn(tenant: Tenant, session_id: str, resources: HostResources) -> TurnSetup:
        wired = turn(tmp_path, resources, tenant, session=session_id, now=None)
        stores.setdefault(tenant.id, []).append(wired.stores.memory)
        return TurnSetup(ToolCatalog(), wired.options, close=wired.close)

    code = serve_managed(
        spec_name=SPEC,
        model="scripted",
        instructions="x",
        tenants=[TenantConfig("acme"), TenantConfig("globex")],
        build_turn=build_turn,
        root=tmp_path,
        argv=["--message", "acme/s1: hello", "--message", "globex/s1: hi"]
        + ["--message", "acme/s2: again"],
    )
    assert code == 0
    acme, globex = stores["acme"], stores["globex"]
    assert len(acme) == 2 and acme[1] is acme[0] and globex[0] is not acme[0]
    assert acme[0].closed and globex[0].closed
