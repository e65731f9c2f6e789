"""The dream a per-turn host starts after a turn (``wire_memory``'s ``DreamJob``) with
``memory.backend: postgres`` and ``memory.state: postgres``: its fact steps consolidate the
tenant's spec's facts in PostgreSQL (never a local ``facts/<spec>.sqlite3``), its record is the
database's, and the worker's folder gets no file."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from state_support import PostgresServerForTests, volume_on

from specwire.runtime.core.fragment import MemoryWiringFragment
from specwire.runtime.core.paths import StoreLayout
from specwire.runtime.core.tenancy import Tenant
from specwire.runtime.core.tool_types import ToolCatalog
from specwire.runtime.dream.state import read_state
from specwire.runtime.facts.providers.admin import FactListing
from specwire.runtime.facts.providers.postgres.provider import FactScope, PostgresFactProvider
from specwire.runtime.facts.providers.protocol import RetainRequest
from specwire.runtime.pg.pool import open_pool
from specwire.runtime.wiring import MemoryDeps, wire_memory

pytestmark = pytest.mark.postgres

SPEC = "pg-dreamer"


@pytest.fixture
def database(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    uri = PostgresServerForTests.fresh_database()
    monkeypatch.setenv("DATABASE_URL", uri)
    yield uri
    PostgresServerForTests.drop_database(uri)


def fragment() -> MemoryWiringFragment:
    return MemoryWiringFragment.model_validate(
        {
            "spec_name": SPEC,
            "memory": {
                "backend": "postgres",
                "dsn": "$DATABASE_URL",
                "state": "postgres",
                "dream": {"every_ms": 3_600_000},
            },
        }
    )


def test_a_scheduled_dream_runs_on_the_tenants_postgres_facts(
    database: str, tmp_path: Path
) -> None:
    seeded = PostgresFactProvider(database, scope=FactScope("acme", SPEC))
    for text in ("the port is 8080", "The port is 8080", "the port is 8081"):
        seeded.retain(RetainRequest(text))
    seeded.close()
    worker = tmp_path / "worker"
    worker.mkdir()
    tenant = Tenant("acme", worker / ".specwire" / "tenants" / "acme")
    lines: list[str] = []
    wired = wire_memory(
        fragment(),
        MemoryDeps(catalog=ToolCatalog(), cwd=worker, tenant=tenant, log=lines.append),
    )
    try:
        seam: Any = wired.options["memory"]
        thread = seam.dream("claude-sonnet-4-5")
        assert thread is not None
        thread.join(timeout=120)
        assert not thread.is_alive()
    finally:
        wired.close()
    assert not any("failed" in line or "facts:" in line for line in lines), lines

    check = PostgresFactProvider(database, scope=FactScope("acme", SPEC))
    try:
        live = sorted(status.fact.text for status in check.list_facts(FactListing()))
    finally:
        check.close()
    assert live == ["the port is 8080", "the port is 8081"]
    pool = open_pool(database)
    try:
        layout = StoreLayout.for_cwd(worker, SPEC, tenant)
        state = read_state(layout, volume_on(pool, layout.root, tenant="acme", spec=SPEC))
    finally:
        pool.close()
    assert state is not None and state["lastOutcome"]["facts"]["superseded"] == 1
    assert [p for p in worker.rglob("*") if p.is_file()] == []
