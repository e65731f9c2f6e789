"""Usage ledgers in PostgreSQL (``memory.state: postgres``) on a real server (pgserver):
concurrent turns from several workers add up exactly, each tenant and spec apart."""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "conformance"))
from conformance_harness import PostgresServerForTests  # noqa: E402

from specwire.runtime.hosts.http.usage_ledger import TenantUsage  # noqa: E402
from specwire.runtime.hosts.http.usage_postgres import PostgresUsageLedger  # noqa: E402
from specwire.runtime.models import Usage  # noqa: E402
from specwire.runtime.pg.pool import open_pool  # noqa: E402

pytestmark = pytest.mark.postgres


@pytest.fixture
def pools() -> Iterator[list[Any]]:
    uri = PostgresServerForTests.fresh_database()
    opened = [open_pool(uri, max_size=4) for _ in range(3)]  # three workers
    yield opened
    for pool in opened:
        pool.close()
    PostgresServerForTests.drop_database(uri)


def test_turns_recorded_by_every_worker_at_once_add_up(pools: list[Any]) -> None:
    ledgers = [PostgresUsageLedger(pool, tenant="acme", spec="bot") for pool in pools]
    assert ledgers[0].read() == TenantUsage()

    def record(ledger: PostgresUsageLedger) -> None:
        for _ in range(20):
            ledger.add(Usage(input=10, output=3, cached=1), estimated=7)

    threads = [threading.Thread(target=record, args=(ledger,)) for ledger in ledgers * 2]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert ledgers[1].read() == TenantUsage(1200, 360, 120, 120, 840)
    # Another tenant, another spec: their own rows.
    assert PostgresUsageLedger(pools[0], tenant="globex", spec="bot").read() == TenantUsage()
    other = PostgresUsageLedger(pools[2], tenant="acme", spec="other")
    assert other.add(Usage(input=5, output=1)) == TenantUsage(5, 1, 0, 1, 0)
    assert ledgers[2].read().turns == 120


def test_admission_counts_every_worker_in_flight_and_forgets_a_dead_one(pools: list[Any]) -> None:
    from specwire.runtime.hosts.http.usage_postgres import WorkerLease

    leases = [WorkerLease(pool) for pool in pools[:2]]
    ledgers = [
        PostgresUsageLedger(pool, tenant="acme", spec="bot", lease=lease)
        for pool, lease in zip(pools[:2], leases, strict=True)
    ]
    seen: list[tuple[int, int]] = []

    def admit_all(used: TenantUsage, in_flight: int, reserved: int) -> tuple[Any, int, str]:
        seen.append((in_flight, reserved))
        return "admit", 100, ""

    verdict, reserved, ticket = ledgers[0].admit(admit_all)
    assert (verdict, reserved) == ("admit", 100) and ticket
    ledgers[1].admit(admit_all)  # the other worker sees the first one's turn in flight
    assert seen == [(0, 0), (1, 100)]
    # The first worker records its turn: its reservation goes in the same transaction.
    assert ledgers[0].add(Usage(input=90, output=5), estimated=80, ticket=ticket).turns == 1
    ledgers[0].admit(admit_all)
    assert seen[-1] == (1, 100)
    # The second worker dies (its lease connection closes): its reservation stops counting.
    leases[1].close()
    ledgers[0].admit(admit_all)
    assert seen[-1] == (1, 100)  # only the first worker's own turn in flight now
    refused = ledgers[0].admit(lambda used, n, r: ("refuse", 0, f"{used.input} used"))
    assert refused == ("refuse", 0, "90 used")
    leases[0].close()
