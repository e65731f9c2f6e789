"""Usage ledgers in PostgreSQL (``memory.state: postgres``) on a real server (pgserver):
concurrent turns from several workers add up exactly, each tenant and spec apart."""

from __future__ import annotations

import sys
import threading
import time
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


def admitting_everything() -> tuple[list[tuple[int, int]], Any]:
    """An admission decision that admits every turn with 100 input tokens reserved, and the
    (turns in flight, tokens reserved) it was shown each time."""
    seen: list[tuple[int, int]] = []

    def admit_all(used: TenantUsage, in_flight: int, reserved: int) -> tuple[Any, int, str]:
        seen.append((in_flight, reserved))
        return "admit", 100, ""

    return seen, admit_all


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
    seen, admit_all = admitting_everything()

    verdict, reserved, ticket = ledgers[0].admit(admit_all)
    assert (verdict, reserved) == ("admit", 100) and ticket
    ledgers[1].admit(admit_all)  # the other worker sees the first one's turn in flight
    assert seen == [(0, 0), (1, 100)]
    # The first worker records its turn: its reservation goes in the same transaction.
    assert ledgers[0].add(Usage(input=90, output=5), estimated=80, ticket=ticket).turns == 1
    ledgers[0].admit(admit_all)
    assert seen[-1] == (1, 100)
    # The second worker dies (its lease connection closes): its reservation stops counting.
    gone(pools[0], leases[1], leases[1].key())
    ledgers[0].admit(admit_all)
    assert seen[-1] == (1, 100)  # only the first worker's own turn in flight now
    refused = ledgers[0].admit(lambda used, n, r: ("refuse", 0, f"{used.input} used"))
    assert refused == ("refuse", 0, "90 used")
    leases[0].close()


def gone(pool: Any, lease: Any, key: int) -> None:
    """Close ``lease`` and wait until the server ended its session (its lock on ``key`` is
    free): the server notices a closed connection a moment after the client closed it."""
    from specwire.runtime.hosts.http.usage_postgres import WORKER_LOCK_CLASS

    lease.close()
    for _ in range(600):
        with pool.connection() as conn, conn.transaction():
            row = conn.execute(
                "SELECT pg_try_advisory_xact_lock(%s, %s)", (WORKER_LOCK_CLASS, key)
            ).fetchone()
        if row is not None and row[0]:
            return
        time.sleep(0.05)
    raise AssertionError("the closed lease's session did not end")


@pytest.fixture
def two_roles() -> Iterator[tuple[str, list[str]]]:
    """A fresh database with its usage tables, and the URIs of two ordinary roles (no
    ``pg_read_all_stats``: neither sees the other's sessions in ``pg_stat_activity``)."""
    import secrets

    import psycopg

    uri = PostgresServerForTests.fresh_database()
    names = [f"worker_{secrets.token_hex(4)}" for _ in range(2)]
    owner = open_pool(uri, max_size=2)
    PostgresUsageLedger(owner, tenant="acme", spec="bot")  # migrated by the owner
    owner.close()
    with psycopg.connect(uri, autocommit=True) as conn:
        for name in names:
            conn.execute(f"CREATE ROLE {name} LOGIN")
            conn.execute(f"GRANT USAGE, CREATE ON SCHEMA public TO {name}")  # migrate's check
            conn.execute(
                f"GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO {name}"
            )
    base, sep, query = uri.partition("?")
    scheme, rest = base.split("://", 1)
    host_part = rest.split("@", 1)[1]
    uris = [f"{scheme}://{name}@{host_part}{sep}{query}" for name in names]
    yield uri, uris
    PostgresServerForTests.drop_database(uri)
    with psycopg.connect(PostgresServerForTests.uri(), autocommit=True) as conn:
        for name in names:
            conn.execute(f"DROP ROLE IF EXISTS {name}")


def test_workers_of_different_roles_see_each_other_live_and_dead(
    two_roles: tuple[str, list[str]],
) -> None:
    """Liveness is the worker's advisory lock, which any role can probe: a live worker of
    another role keeps its reservations (``pg_stat_activity`` would hide its session and void
    them), a dead one's are dropped."""
    from specwire.runtime.hosts.http.usage_postgres import WorkerLease

    _, uris = two_roles
    pools = [open_pool(uri, max_size=2) for uri in uris]
    leases = [WorkerLease(pool) for pool in pools]
    try:
        ledgers = [
            PostgresUsageLedger(pool, tenant="acme", spec="bot", lease=lease)
            for pool, lease in zip(pools, leases, strict=True)
        ]
        seen, admit_all = admitting_everything()

        with pools[1].connection() as conn:  # the second role cannot see the first's session
            hidden = conn.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE usename = %s AND backend_start "
                "IS NOT NULL",
                (uris[0].split("://", 1)[1].split("@", 1)[0],),
            ).fetchone()
        ledgers[0].admit(admit_all)
        assert hidden is not None and hidden[0] == 0
        ledgers[1].admit(admit_all)  # the first role's turn in flight counts
        ledgers[1].admit(admit_all)
        ledgers[0].admit(admit_all)  # and the second's, both of them, for the first
        assert seen == [(0, 0), (1, 100), (2, 200), (3, 300)]
        assert leases[0].key() != leases[1].key()
        # The first worker dies: its two reservations stop counting for the second.
        gone(pools[1], leases[0], leases[0].key())
        ledgers[1].admit(admit_all)
        assert seen[-1] == (2, 200)
        # A worker whose lease reopens takes a new key: its old reservations are void.
        gone(pools[1], leases[1], leases[1].key())
        ledgers[1].admit(admit_all)
        assert seen[-1] == (0, 0)
        # A reservation from before the key (schema version 1) is judged by its backend: one
        # that is gone holds nothing.
        with pools[1].connection() as conn:
            conn.execute(
                "INSERT INTO usage_reservations (tenant, spec, ticket, input, owner_pid, "
                "owner_since) VALUES ('acme', 'bot', 'legacy', 500, 0, now())"
            )
        ledgers[1].admit(admit_all)
        assert seen[-1] == (1, 100)
    finally:
        for lease in leases:
            lease.close()
        for pool in pools:
            pool.close()


def test_the_dream_kind_adds_up_apart_from_the_turns_and_the_owner_reads_it(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A ledger row written before the dream's kind (schema 2) gains it with zeros; dreams
    recorded by several workers at once add up; the turns' totals (the budget's) never move;
    ``codegen memory usage --backend postgres`` shows both."""
    import json

    from specwire.runtime.facts.providers.connect import close_shared_pools
    from specwire.runtime.hosts.http.usage_postgres import COMPONENT, USAGE_MIGRATIONS
    from specwire.runtime.owner.command import main
    from specwire.runtime.pg.migrations import migrate_once
    from specwire.runtime.usage.totals import DreamUsage

    uri = PostgresServerForTests.fresh_database()
    old, new = open_pool(uri, max_size=2), open_pool(uri, max_size=4)
    try:
        migrate_once(old, COMPONENT, USAGE_MIGRATIONS[:2])
        with old.connection() as conn:
            conn.execute(
                "INSERT INTO usage_ledgers (tenant, spec, input, output, turns) "
                "VALUES ('acme', 'bot', 50, 5, 2)"
            )
        ledger = PostgresUsageLedger(new, tenant="acme", spec="bot")  # migrates to the kind
        assert ledger.read_dream() == DreamUsage()
        assert ledger.read() == TenantUsage(50, 5, 0, 2, 0)

        one = DreamUsage(1, 2, 300, 20, 10, 4500)
        threads = [
            threading.Thread(target=lambda: [ledger.add_dream(one) for _ in range(5)])
            for _ in range(4)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert ledger.read_dream() == DreamUsage(20, 40, 6000, 400, 200, 90000)
        assert ledger.read() == TenantUsage(50, 5, 0, 2, 0)  # the turns' totals: untouched
        globex = PostgresUsageLedger(new, tenant="globex", spec="bot")
        assert globex.add_dream(one) == one  # a row of its own

        monkeypatch.setenv("USAGE_TEST_DSN", uri)
        status = main(
            ["--backend", "postgres", "--dsn", "$USAGE_TEST_DSN", "--tenant", "acme", "--json"]
            + ["usage"]
        )
        out, err = capsys.readouterr()
        assert status == 0, err
        [shown] = json.loads(out)
        assert shown["spec"] == "bot" and shown["turns"]["turns"] == 2
        assert shown["dream"]["runs"] == 20 and shown["dream"]["costUsd"] == 0.09
        # A mistyped --spec is one line, never a spec shown with no usage.
        status = main(
            ["--backend", "postgres", "--dsn", "$USAGE_TEST_DSN", "--tenant", "acme", "--json"]
            + ["--spec", "bto", "usage"]
        )
        out, err = capsys.readouterr()
        assert (status, out) == (2, "") and "--spec 'bto'" in err, (out, err)
    finally:
        close_shared_pools()
        old.close()
        new.close()
        PostgresServerForTests.drop_database(uri)


def terminate_lease(pool: Any, lease: Any) -> None:
    """End ``lease``'s session from the server's side, as a failover, an idle timeout or an
    administrator does, while the worker goes on (its connection object still looks open)."""
    pid = lease._conn.info.backend_pid
    with pool.connection() as conn:
        conn.execute("SELECT pg_terminate_backend(%s)", (pid,))
    gone_key = lease._key
    for _ in range(600):  # until the server freed the lock with the session
        with pool.connection() as conn, conn.transaction():
            from specwire.runtime.hosts.http.usage_postgres import WORKER_LOCK_CLASS

            row = conn.execute(
                "SELECT pg_try_advisory_xact_lock(%s, %s)", (WORKER_LOCK_CLASS, gone_key)
            ).fetchone()
        if row is not None and row[0]:
            return
        time.sleep(0.05)
    raise AssertionError("the terminated lease's session did not end")


def test_a_worker_whose_lease_session_ended_still_counts_its_turns(pools: list[Any]) -> None:
    """A live worker whose lease session the server ended (its connection still looks open
    to psycopg) must not go on reserving under a key nobody holds: every such reservation
    would be dropped by the next admission, so its turns in flight would never count and
    parallel requests would pass the budget. Its next admission takes a new key and moves
    its turns in flight under it."""
    from specwire.runtime.hosts.http.usage_postgres import WorkerLease

    leases = [WorkerLease(pool) for pool in pools[:2]]
    ledgers = [
        PostgresUsageLedger(pool, tenant="acme", spec="bot", lease=lease)
        for pool, lease in zip(pools[:2], leases, strict=True)
    ]
    seen, admit_all = admitting_everything()

    try:
        first = ledgers[0].admit(admit_all)[2]
        old_key = leases[0].key()
        terminate_lease(pools[2], leases[0])
        ledgers[0].admit(admit_all)  # the turn admitted before the loss still counts
        ledgers[0].admit(admit_all)
        ledgers[1].admit(admit_all)  # the other worker sees all three in flight
        assert seen == [(0, 0), (1, 100), (2, 200), (3, 300)]
        assert leases[0].key() != old_key
        # Turns that end drop their reservations: only the other worker's is left.
        ledgers[0].add(Usage(input=90), estimated=80, ticket=first)
        with pools[2].connection() as conn:
            tickets = conn.execute("SELECT ticket FROM usage_reservations").fetchall()
        for (ticket,) in tickets:
            if ticket != first:
                ledgers[0].release(ticket)
        ledgers[1].admit(admit_all)
        assert seen[-1] == (0, 0)
    finally:
        for lease in leases:
            lease.close()


def test_a_reservation_written_while_another_thread_renewed_the_lease_moves_to_the_new_key(
    pools: list[Any],
) -> None:
    """Review finding: an admission commits its reservation under the lease's key, then
    records the ticket in the lease; another thread renewing the lease in between moved the
    tickets it knew (not this one), so this reservation stayed under the lost key and the next
    admission voided it: the turn stopped counting. ``hold`` now moves it to the new key."""
    from specwire.runtime.hosts.http.usage_postgres import WorkerLease

    lease = WorkerLease(pools[0])
    ledger = PostgresUsageLedger(pools[0], tenant="acme", spec="bot", lease=lease)
    other = PostgresUsageLedger(pools[1], tenant="acme", spec="bot", lease=WorkerLease(pools[1]))
    seen, admit_all = admitting_everything()

    old = lease.key()
    hold = lease.hold

    def renewed_in_between(*args: Any, **kwargs: Any) -> None:
        terminate_lease(pools[2], lease)  # another thread finds the lease lost and renews it
        lease.renew(old)
        hold(*args, **kwargs)

    try:
        lease.hold = renewed_in_between  # type: ignore[method-assign]
        ticket = ledger.admit(admit_all)[2]
        lease.hold = hold  # type: ignore[method-assign]
        assert lease.key() != old
        with pools[2].connection() as conn:
            row = conn.execute(
                "SELECT owner_key FROM usage_reservations WHERE ticket = %s", (ticket,)
            ).fetchone()
        assert row is not None and row[0] == lease.key()
        other.admit(admit_all)  # the other worker still counts this worker's turn in flight
        assert seen[-1] == (1, 100)
    finally:
        lease.close()
        assert other.lease is not None
        other.lease.close()
