"""Each tenant's token usage in PostgreSQL (``memory.state: postgres``): the usage ledger's twin.

One row per tenant and spec in ``usage_ledgers``. Recording a turn is one transaction that locks
the row (``INSERT … ON CONFLICT DO UPDATE`` adds to the totals under the row lock) and drops the
turn's reservation, so workers on any number of hosts add to one ledger without losing a turn.

Admission is shared too (``admit``): a budgeted tenant's turn is decided under the same row
lock, against the recorded totals and every turn in flight on every worker
(``usage_reservations``), and its reservation is written in that transaction. A reservation
names the worker that holds it by its worker key (``WorkerLease``: a connection of its own,
opened once per serving process, holding a session-level advisory lock on a random key in a
key space of its own, ``(WORKER_LOCK_CLASS, key)``). A worker that died holds nothing: the
server frees its lock when its connection ends, so another worker's
``pg_try_advisory_xact_lock`` on the key succeeds, and its reservations are dropped at the
next admission. This works for any role (``pg_stat_activity`` hides other roles' sessions
from a role without ``pg_read_all_stats``); only a reservation written before the key (schema
version 1, ``owner_key`` null) is still judged by ``pg_stat_activity``.

A turn that must wait for room does not poll: every change that can make room (a turn's usage
recorded, a reservation released, a dead worker's reservations dropped) sends
``NOTIFY specwire_usage`` with the ledger's key, and the worker's lease listens on a connection
of its own (``UsageChanges``), waking the turns waiting on that ledger at once; a bounded
fallback poll covers a lost connection.
"""

from __future__ import annotations

import secrets
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final

from specwire.runtime.core.errors import StoreError
from specwire.runtime.hosts.http.usage_ledger import Decide, TenantUsage, Verdict
from specwire.runtime.models import Usage
from specwire.runtime.pg.migrations import advisory_key, migrate_once
from specwire.runtime.pg.pool import translated
from specwire.runtime.usage.database import (
    COMPONENT,
    DREAM_COLUMNS,
    TURN_COLUMNS,
    USAGE_MIGRATIONS,
    read_row,
)
from specwire.runtime.usage.totals import DreamUsage

if TYPE_CHECKING:
    from psycopg_pool import ConnectionPool

# The channel every ledger change is announced on; the payload is the ledger's key.
CHANNEL: Final = "specwire_usage"
# How long the listener waits for a notice before it looks at its stop flag again, and how long
# it waits before it reconnects after losing its connection.
_LISTEN_TICK_S: Final = 0.5
_RECONNECT_S: Final = 1.0


def ledger_key(tenant: str, spec: str) -> str:
    """The payload announcing a change of ``(tenant, spec)``'s ledger (a hash: no names)."""
    return str(advisory_key(f"specwire.usage\x1f{tenant}\x1f{spec}"))


# The first key of every worker lock (the two-key advisory lock space, apart from the one-key
# locks the tiers take): "sw" and 1.
WORKER_LOCK_CLASS: Final = 0x73770001


class WorkerLease:
    """This serving process, as the database sees it: a connection of its own, held while the
    process serves, holding the advisory lock ``(WORKER_LOCK_CLASS, key)``. Reservations name
    the key; when the process dies the server closes the connection, frees the lock and its
    reservations stop counting."""

    def __init__(self, pool: ConnectionPool[Any]) -> None:
        self.pool = pool
        self._conn: Any = None
        self._key: int | None = None
        self._lock = threading.Lock()
        # This process's turns in flight: ticket → (tenant, spec, input reserved), written
        # again under the new key when the lease is reopened.
        self._held: dict[str, tuple[str, str, int]] = {}
        self.changes = UsageChanges(lambda: _connect(pool))

    def key(self) -> int:
        """The worker's key, whose lock the lease connection holds (reopened with a new key if
        the connection was lost, this process's turns in flight moved under it)."""
        with self._lock:
            if self._conn is not None and not self._conn.closed and not self._conn.broken:
                assert self._key is not None
                return self._key
            return self._reopen()

    def renew(self, lost: int) -> int:
        """The lease's session ended on the server while its connection still looked open (a
        failover, an idle timeout, an administrator): nobody holds ``lost`` any more, so every
        reservation under it is void at the next admission. Reopen the lease with a new key
        and move this process's turns in flight under it (unless another thread did)."""
        with self._lock:
            if self._key != lost and self._conn is not None and not self._conn.closed:
                assert self._key is not None
                return self._key
            return self._reopen()

    def _reopen(self) -> int:
        if self._conn is not None:
            self._conn.close()
        with translated("open the worker's lease"):
            self._conn = _connect(self.pool)
            self._key = _locked_key(self._conn)
            if self._held:
                # A reservation another worker already dropped comes back: its turn runs on.
                with self.pool.connection() as conn, conn.transaction():
                    for ticket, held in sorted(self._held.items()):
                        _own(conn, ticket, held, self._key)
        return self._key

    def hold(
        self, ticket: str, tenant: str, spec: str, reserved: int, *, written_under: int
    ) -> None:
        """A turn of this process admitted under ``ticket``, ``reserved`` input tokens, its
        reservation written under the key ``written_under``. When another thread reopened the
        lease in between (so ``_reopen`` could not see this ticket), the reservation moves to
        the new key here: under the old one it would be void at the next admission."""
        with self._lock:
            self._held[ticket] = (tenant, spec, reserved)
            if self._key is None or self._key == written_under:
                return
            with (
                translated("move a reservation to the worker's lease"),
                self.pool.connection() as conn,
                conn.transaction(),
            ):
                _own(conn, ticket, (tenant, spec, reserved), self._key)

    def drop(self, ticket: str) -> None:
        """The turn of ``ticket`` ended (before its reservation is deleted)."""
        with self._lock:
            self._held.pop(ticket, None)

    def close(self) -> None:
        """The process stops serving: its lock goes, and so do its turns' reservations (a
        lease used again afterwards starts with none)."""
        self.changes.close()
        with self._lock:
            self._held.clear()
            if self._conn is not None:
                self._conn.close()  # the server frees the lock with the session
                self._conn = None


def _own(conn: Any, ticket: str, held: tuple[str, str, int], key: int) -> None:
    """The reservation of ``ticket`` (tenant, spec, input reserved) under the worker's ``key``:
    written again if an admission elsewhere dropped it (its turn runs on)."""
    tenant, spec, reserved = held
    conn.execute(
        "INSERT INTO usage_reservations (tenant, spec, ticket, input, owner_key) "
        "VALUES (%s, %s, %s, %s, %s) ON CONFLICT (tenant, spec, ticket) DO UPDATE "
        "SET owner_key = EXCLUDED.owner_key",
        (tenant, spec, ticket, reserved, key),
    )


def _connect(pool: ConnectionPool[Any]) -> Any:
    """A connection of its own (autocommit) to the pool's database, with the pool's options."""
    import psycopg

    conninfo = pool.conninfo
    kwargs = getattr(pool, "kwargs", None)
    return psycopg.connect(
        conninfo() if callable(conninfo) else conninfo,
        autocommit=True,
        **(dict(kwargs) if isinstance(kwargs, dict) else {}),
    )


class UsageChanges:
    """The ledger changes announced on ``CHANNEL``, for the turns of this process waiting for
    room: ``subscribe(key, wake)`` calls ``wake()`` (from the listener's thread) on every change
    of the ledger ``key`` until the returned function is called. The listener (a daemon thread
    on a connection of its own) starts with the first subscription and stops on ``close``; a
    lost connection is reopened, and a notice missed meanwhile is covered by the waiter's
    fallback poll."""

    def __init__(self, connect: Callable[[], Any]) -> None:
        self._connect = connect
        self._lock = threading.Lock()
        self._subscribers: dict[str, dict[int, Callable[[], None]]] = {}
        self._next = 0
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self.listening = threading.Event()  # set while the connection listens

    def subscribe(self, key: str, wake: Callable[[], None]) -> Callable[[], None]:
        with self._lock:
            self._next += 1
            token = self._next
            self._subscribers.setdefault(key, {})[token] = wake
            if self._thread is None and not self._stop.is_set():
                self._thread = threading.Thread(
                    target=self._listen, name="specwire-usage-listen", daemon=True
                )
                self._thread.start()

        def unsubscribe() -> None:
            with self._lock:
                waiting = self._subscribers.get(key, {})
                waiting.pop(token, None)
                if not waiting:
                    self._subscribers.pop(key, None)

        return unsubscribe

    def waiting(self, key: str) -> int:
        """How many subscribers wait for a change of the ledger ``key``."""
        with self._lock:
            return len(self._subscribers.get(key, {}))

    def close(self) -> None:
        self._stop.set()
        thread = self._thread
        if thread is not None:
            thread.join(timeout=_LISTEN_TICK_S * 4)

    def _wake(self, key: str | None) -> None:
        """Call the subscribers of ``key`` (every subscriber when None: after a reconnect)."""
        with self._lock:
            if key is None:
                wakes = [w for waiting in self._subscribers.values() for w in waiting.values()]
            else:
                wakes = list(self._subscribers.get(key, {}).values())
        for wake in wakes:
            wake()

    def _listen(self) -> None:
        while not self._stop.is_set():
            conn = None
            try:
                conn = self._connect()
                conn.execute(f"LISTEN {CHANNEL}")
                self.listening.set()
                self._wake(None)  # a change may have happened while nobody listened
                while not self._stop.is_set():
                    for notice in conn.notifies(timeout=_LISTEN_TICK_S):
                        self._wake(notice.payload)
            except Exception:  # noqa: BLE001 (the connection was lost: reconnect, waiters poll)
                self.listening.clear()
                self._stop.wait(_RECONNECT_S)
            finally:
                self.listening.clear()
                if conn is not None:
                    conn.close()


def _locked_key(conn: Any) -> int:
    """A random worker key whose session-level lock ``conn`` now holds (a key a live worker
    holds is never taken twice)."""
    for _ in range(64):
        key = secrets.randbits(32) - 2**31
        row = conn.execute(
            "SELECT pg_try_advisory_lock(%s, %s)", (WORKER_LOCK_CLASS, key)
        ).fetchone()
        if row is not None and row[0]:
            return key
    raise StoreError("the worker's lease found no free worker key")


_TOTALS: Final = TURN_COLUMNS


class PostgresUsageLedger:
    """One tenant's usage of one spec, in the database (``UsageLedger``'s interface)."""

    def __init__(
        self,
        pool: ConnectionPool[Any],
        *,
        tenant: str,
        spec: str,
        lease: WorkerLease | None = None,
    ) -> None:
        self.pool = pool
        self.tenant = tenant
        self.spec = spec
        self.lease = lease
        migrate_once(pool, COMPONENT, USAGE_MIGRATIONS)

    def admit(self, decide: Decide) -> tuple[Verdict, int, str]:
        """Decide on one turn under the ledger row's lock, against the recorded totals and the
        live reservations of every worker; an admitted turn's reservation is written in the same
        transaction. Returns the verdict, the input reserved and, when admitted, the ticket
        (``add``/``release`` drop it); when refused, the reason."""
        if self.lease is None:
            raise StoreError("shared admission needs the worker's lease")
        worker = self.lease.key()
        try:
            admitted = self._admit(decide, worker)
        except _LeaseLost:
            worker = self.lease.renew(worker)
            admitted = self._admit(decide, worker)
        if admitted[0] == "admit":
            self.lease.hold(admitted[2], self.tenant, self.spec, admitted[1], written_under=worker)
        return admitted

    def _admit(self, decide: Decide, worker: int) -> tuple[Verdict, int, str]:
        scope = {"tenant": self.tenant, "spec": self.spec}
        with (
            translated("admit a turn"),
            self.pool.connection() as conn,
            conn.transaction(),
        ):
            conn.execute(
                "INSERT INTO usage_ledgers (tenant, spec) VALUES (%(tenant)s, %(spec)s) "
                "ON CONFLICT DO NOTHING",
                scope,
            )
            row = conn.execute(
                f"SELECT {_TOTALS} FROM usage_ledgers WHERE tenant = %(tenant)s "
                "AND spec = %(spec)s FOR UPDATE",
                scope,
            ).fetchone()
            used = _usage(row) if row is not None else TenantUsage()
            # This worker's own key must be held (by its lease): when the lock is free, the
            # lease's session ended on the server and reservations under the key are void.
            lost = conn.execute(
                "SELECT pg_try_advisory_xact_lock(%s, %s)", (WORKER_LOCK_CLASS, worker)
            ).fetchone()
            if lost is None or lost[0]:
                raise _LeaseLost(worker)
            # Reservations of workers that are gone (their lease connection closed, so their
            # lock is free) are void.
            dropped = conn.execute(
                "DELETE FROM usage_reservations r WHERE r.tenant = %(tenant)s "
                "AND r.spec = %(spec)s AND CASE WHEN r.owner_key IS NULL THEN NOT EXISTS "
                "(SELECT 1 FROM pg_stat_activity a WHERE a.pid = r.owner_pid "
                "AND a.backend_start = r.owner_since) "
                "ELSE pg_try_advisory_xact_lock(%(class)s, r.owner_key) END",
                {**scope, "class": WORKER_LOCK_CLASS},
            ).rowcount
            if dropped:
                self._announce(conn)
            live = conn.execute(
                "SELECT count(*), coalesce(sum(input), 0) FROM usage_reservations "
                "WHERE tenant = %(tenant)s AND spec = %(spec)s",
                scope,
            ).fetchone()
            in_flight, reserved = (int(live[0]), int(live[1])) if live else (0, 0)
            verdict, reservation, reason = decide(used, in_flight, reserved)
            if verdict != "admit":
                return verdict, 0, reason
            ticket = secrets.token_hex(12)
            conn.execute(
                "INSERT INTO usage_reservations (tenant, spec, ticket, input, owner_key) "
                "VALUES (%(tenant)s, %(spec)s, %(ticket)s, %(input)s, %(key)s)",
                {**scope, "ticket": ticket, "input": reservation, "key": worker},
            )
        return "admit", reservation, ticket

    def release(self, ticket: str) -> None:
        """Drop a turn's reservation (its usage was recorded, or it failed)."""
        if self.lease is not None:
            self.lease.drop(ticket)
        with (
            translated("release a reservation"),
            self.pool.connection() as conn,
            conn.transaction(),
        ):
            released = conn.execute(
                "DELETE FROM usage_reservations WHERE tenant = %s AND spec = %s AND ticket = %s",
                (self.tenant, self.spec, ticket),
            ).rowcount
            if released:
                self._announce(conn)

    def subscribe(self, wake: Callable[[], None]) -> Callable[[], None]:
        """Call ``wake()`` (from another thread) whenever this ledger changes on any worker,
        until the returned function is called."""
        if self.lease is None:
            raise StoreError("waiting for a shared ledger needs the worker's lease")
        return self.lease.changes.subscribe(ledger_key(self.tenant, self.spec), wake)

    def _announce(self, conn: Any) -> None:
        """Tell every worker's waiting turns that this ledger changed (sent at commit)."""
        conn.execute("SELECT pg_notify(%s, %s)", (CHANNEL, ledger_key(self.tenant, self.spec)))

    def read(self) -> TenantUsage:
        with translated("read the usage ledger"), self.pool.connection() as conn:
            row = conn.execute(
                f"SELECT {_TOTALS} FROM usage_ledgers WHERE tenant = %s AND spec = %s",
                (self.tenant, self.spec),
            ).fetchone()
        return _usage(row) if row is not None else TenantUsage()

    def add(self, usage: Usage, *, estimated: int = 0, ticket: str | None = None) -> TenantUsage:
        """Record one turn's ``usage`` (``estimated``: what admission reserved for its message)
        under the ledger row's lock, dropping its reservation (``ticket``) in the same
        transaction; the new totals."""
        if ticket is not None and self.lease is not None:
            self.lease.drop(ticket)
        with translated("record usage"), self.pool.connection() as conn, conn.transaction():
            if ticket is not None:
                conn.execute(
                    "DELETE FROM usage_reservations WHERE tenant = %s AND spec = %s "
                    "AND ticket = %s",
                    (self.tenant, self.spec, ticket),
                )
            row = conn.execute(
                f"INSERT INTO usage_ledgers (tenant, spec, {_TOTALS}) "
                "VALUES (%s, %s, %s, %s, %s, 1, %s) "
                "ON CONFLICT (tenant, spec) DO UPDATE SET "
                "input = usage_ledgers.input + EXCLUDED.input, "
                "output = usage_ledgers.output + EXCLUDED.output, "
                "cached = usage_ledgers.cached + EXCLUDED.cached, "
                "turns = usage_ledgers.turns + 1, "
                "estimated = usage_ledgers.estimated + EXCLUDED.estimated "
                f"RETURNING {_TOTALS}",
                (
                    self.tenant,
                    self.spec,
                    max(0, usage.input),
                    max(0, usage.output),
                    max(0, usage.cached),
                    max(0, estimated),
                ),
            ).fetchone()
            if row is not None:
                self._announce(conn)
        if row is None:
            raise StoreError("the usage ledger did not record the turn")
        return _usage(row)

    def read_dream(self) -> DreamUsage:
        with translated("read the usage ledger"), self.pool.connection() as conn:
            return read_row(conn, self.tenant, self.spec)[1]

    def add_dream(self, dream: DreamUsage) -> DreamUsage:
        """Record one dream's model phase, a kind of its own: the turns' totals, and so the
        budget and the turns waiting on it, do not change (nothing is announced)."""
        with translated("record the dream's usage"), self.pool.connection() as conn:
            row = conn.execute(
                f"INSERT INTO usage_ledgers (tenant, spec, {DREAM_COLUMNS}) "
                "VALUES (%s, %s, %s, %s, %s, %s, %s, %s) "
                "ON CONFLICT (tenant, spec) DO UPDATE SET "
                "dream_runs = usage_ledgers.dream_runs + EXCLUDED.dream_runs, "
                "dream_calls = usage_ledgers.dream_calls + EXCLUDED.dream_calls, "
                "dream_input = usage_ledgers.dream_input + EXCLUDED.dream_input, "
                "dream_output = usage_ledgers.dream_output + EXCLUDED.dream_output, "
                "dream_cached = usage_ledgers.dream_cached + EXCLUDED.dream_cached, "
                "dream_cost_micro_usd = usage_ledgers.dream_cost_micro_usd "
                "+ EXCLUDED.dream_cost_micro_usd "
                f"RETURNING {DREAM_COLUMNS}",
                (self.tenant, self.spec, *(max(0, value) for value in dream.values())),
            ).fetchone()
        if row is None:
            raise StoreError("the usage ledger did not record the dream")
        return DreamUsage(*(int(value) for value in row))


class _LeaseLost(StoreError):
    """The worker's lease key is held by nobody: its session ended on the server (once more
    right after the lease was reopened, the admission fails as a store error)."""

    def __init__(self, key: int) -> None:
        super().__init__("the worker's lease on the database was lost; the turn was not admitted")
        self.key = key


def _usage(row: Any) -> TenantUsage:
    return TenantUsage(*(int(value) for value in row))
