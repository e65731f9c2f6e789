"""Statements under deadlines: the server's ``statement_timeout`` in every transaction, and a
client-side deadline (a watchdog thread) for when the network hangs.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, TypeVar

from specwire.runtime.core.errors import StoreError
from specwire.runtime.facts.providers.errors import ProviderTimeout, ProviderUncertain
from specwire.runtime.facts.providers.postgres.sql import SCOPE as _SCOPE
from specwire.runtime.facts.providers.protocol import HEALTH_DEADLINE_S, Health, RecallRequest
from specwire.runtime.facts.providers.recall_bounds import give_up_if_expired, remaining_s
from specwire.runtime.pg.pool import brief as _brief
from specwire.runtime.pg.pool import translated as _translated

if TYPE_CHECKING:
    from psycopg import Connection
    from psycopg_pool import ConnectionPool

    from specwire.runtime.facts.providers.postgres.binding import Binding


# The client-side deadline is the statement deadline plus this (connection wait, round trips).
WATCHDOG_MARGIN_S = 1.0
_T = TypeVar("_T")
_watchdog_pool: ThreadPoolExecutor | None = None
_watchdog_lock = threading.Lock()


def watchdog() -> ThreadPoolExecutor:
    global _watchdog_pool
    with _watchdog_lock:
        if _watchdog_pool is None:
            _watchdog_pool = ThreadPoolExecutor(max_workers=32, thread_name_prefix="specwire-pg")
        return _watchdog_pool


def bounded(
    what: str,
    write: bool,
    call: Callable[[], _T],
    *,
    timeout_s: float,
    request: RecallRequest | None = None,
) -> _T:
    """``call()`` under a client-side deadline: the server's ``statement_timeout`` cannot
    fire when the network hangs, so a turn would wait forever. The thread left behind
    finishes when the connection does (keepalives end a dead one). A ``request`` with a
    deadline of its own is waited for no longer than that."""
    future = watchdog().submit(call)
    wait_s = timeout_s + WATCHDOG_MARGIN_S
    left = None if request is None else remaining_s(request)
    try:
        return future.result(timeout=wait_s if left is None else max(0.0, min(wait_s, left)))
    except FutureTimeout:
        if request is not None and left is not None and left < wait_s:
            give_up_if_expired(request, what)
        if write:
            raise ProviderUncertain(
                f"{what}: the fact database did not answer within {timeout_s:g} s; "
                "the write may or may not have been applied",
                operation=what,
                operation_id=None,
            ) from None
        raise ProviderTimeout(
            f"{what}: the fact database did not answer within {timeout_s:g} s",
            code="deadline_exceeded",
            retryable=True,
        ) from None


@contextmanager
def transaction(
    pool: ConnectionPool[Any], what: str, *, timeout_s: float
) -> Iterator[Connection[Any]]:
    timeout_ms = max(1, int(timeout_s * 1000))
    with (
        _translated(what),
        pool.connection(timeout=timeout_s) as conn,
        conn.transaction(),
    ):
        conn.execute("SELECT set_config('statement_timeout', %s, true)", (str(timeout_ms),))
        yield conn


def health(db: Binding) -> Health:
    problem: str | None = None
    try:
        import psycopg
        from psycopg_pool import PoolTimeout

        deadline_ms = int(HEALTH_DEADLINE_S * 1000)
        with db.pool.connection(timeout=HEALTH_DEADLINE_S) as conn, conn.transaction():
            conn.execute(
                "SELECT set_config('statement_timeout', %s, true), "
                "set_config('lock_timeout', %s, true)",
                (str(deadline_ms), str(deadline_ms)),
            )
            conn.execute(
                f"SELECT 1 FROM facts f WHERE {_SCOPE} LIMIT 1", db.scope.params()
            ).fetchall()
    except (PoolTimeout, psycopg.Error, StoreError) as exc:
        problem = f"the fact database is not answering: {_brief(exc)}"
    return Health(ok=problem is None, message=problem, checked_at=db.now())
