"""A budgeted turn waiting for room in a ledger shared by every worker wakes when the ledger
changes on any worker (LISTEN/NOTIFY), not at its next poll; on a real server (pgserver)."""

from __future__ import annotations

import asyncio
import hashlib
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "conformance"))
from conformance_harness import PostgresServerForTests  # noqa: E402

from specwire.runtime.hosts.http.managed_app import (  # noqa: E402
    ManagedReply,
    ManagedService,
    build_managed_app,
)
from specwire.runtime.hosts.http.tenant_keys import TenantKeys  # noqa: E402
from specwire.runtime.hosts.http.usage_postgres import (  # noqa: E402
    PostgresUsageLedger,
    WorkerLease,
    ledger_key,
)
from specwire.runtime.hosts.types import TenantConfig  # noqa: E402
from specwire.runtime.models import Usage  # noqa: E402
from specwire.runtime.pg.pool import open_pool  # noqa: E402

pytestmark = pytest.mark.postgres

KEY = "sk-acme-0123456789abcdef0123"


@pytest.fixture
def workers() -> Iterator[list[tuple[Any, WorkerLease]]]:
    """Two workers' pools and leases on one fresh database."""
    uri = PostgresServerForTests.fresh_database()
    opened = [open_pool(uri, max_size=4) for _ in range(2)]
    leases = [WorkerLease(pool) for pool in opened]
    yield list(zip(opened, leases, strict=True))
    for lease in leases:
        lease.close()
    for pool in opened:
        pool.close()
    PostgresServerForTests.drop_database(uri)


def test_a_change_on_one_worker_wakes_the_subscribers_of_that_ledger_only(
    workers: list[tuple[Any, WorkerLease]],
) -> None:
    (pool_a, lease_a), (pool_b, lease_b) = workers
    acme_a = PostgresUsageLedger(pool_a, tenant="acme", spec="bot", lease=lease_a)
    globex_a = PostgresUsageLedger(pool_a, tenant="globex", spec="bot", lease=lease_a)
    acme_b = PostgresUsageLedger(pool_b, tenant="acme", spec="bot", lease=lease_b)
    woken: list[str] = []
    acme_woke = threading.Event()

    def wake() -> None:
        woken.append("acme")
        acme_woke.set()

    unsubscribe = acme_b.subscribe(wake)
    assert lease_b.changes.listening.wait(30)
    assert acme_woke.wait(30)  # a listener that (re)connects wakes everyone once
    woken.clear()
    acme_woke.clear()
    globex_a.add(Usage(input=5, output=1))  # another tenant's ledger: not acme's waiters
    acme_a.add(Usage(input=10, output=2))
    assert acme_woke.wait(30)
    assert woken == ["acme"]
    # An admitted turn's reservation released on worker A wakes worker B's waiters too.
    acme_woke.clear()
    verdict, _, ticket = acme_a.admit(lambda used, n, r: ("admit", 50, ""))
    assert verdict == "admit"
    acme_a.release(ticket)
    assert acme_woke.wait(30)
    unsubscribe()
    assert lease_b.changes.waiting(ledger_key("acme", "bot")) == 0


def test_a_waiting_turn_on_one_worker_starts_when_a_turn_on_another_ends(
    workers: list[tuple[Any, WorkerLease]],
) -> None:
    """Worker A runs the tenant's first turn (it runs alone); worker B's turn waits for it. The
    fallback poll is 600 s, so only the announcement can start B's turn within the test."""
    release_first = threading.Event()
    ran: list[str] = []

    def run_turn(tenant: str, session: str, message: str, user: Any, sink: Any) -> ManagedReply:
        if message == "first":
            assert release_first.wait(60)
        ran.append(message)
        return ManagedReply(session, [f"echo {message}"], Usage(100, 10, 0))

    def service(pool: Any, lease: WorkerLease) -> ManagedService:
        ledger = PostgresUsageLedger(pool, tenant="acme", spec="bot", lease=lease)
        return ManagedService(
            spec_name="bot",
            keys=TenantKeys((("acme", hashlib.sha256(KEY.encode()).digest()),)),
            tenants={"acme": TenantConfig("acme", max_input_tokens=100_000)},
            run_turn=run_turn,
            ledger_for=lambda tenant: ledger,
            max_body=1 << 20,
            log=lambda line: None,
            admission_poll_s=600.0,
        )

    (pool_a, lease_a), (pool_b, lease_b) = workers
    apps = [build_managed_app(service(pool, lease)) for pool, lease in workers]

    def reservations() -> int:
        with pool_a.connection() as conn:
            row = conn.execute("SELECT count(*) FROM usage_reservations").fetchone()
        return int(row[0]) if row else 0

    async def until(check: Any) -> None:
        for _ in range(600):
            if await asyncio.to_thread(check):
                return
            await asyncio.sleep(0.05)
        raise AssertionError("timed out")

    async def scenario() -> list[httpx.Response]:
        clients = [
            httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://w")
            for app in apps
        ]

        async def ask(client: httpx.AsyncClient, text: str) -> httpx.Response:
            return await client.post(
                "/v1/chat/completions",
                headers={"Authorization": f"Bearer {KEY}", "X-Session-Id": text},
                json={"model": "bot", "messages": [{"role": "user", "content": text}]},
                timeout=120,
            )

        try:
            first = asyncio.create_task(ask(clients[0], "first"))
            await until(lambda: reservations() == 1)
            second = asyncio.create_task(ask(clients[1], "second"))
            await until(lambda: lease_b.changes.waiting(ledger_key("acme", "bot")) == 1)
            assert ran == [] and not second.done()
            release_first.set()
            return [await first, await asyncio.wait_for(second, 60)]
        finally:
            for client in clients:
                await client.aclose()

    answers = asyncio.run(scenario())
    assert [answer.status_code for answer in answers] == [200, 200]
    assert ran == ["first", "second"]
    assert reservations() == 0
    assert lease_b.changes.waiting(ledger_key("acme", "bot")) == 0
