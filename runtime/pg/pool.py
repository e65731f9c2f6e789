"""Connection pools: ``open_pool`` for one caller, ``shared_pool`` for the process.

One pool per connection string per process is shared by every tenant, spec and tier the
process serves (facts, documents, continuity, session logs, ...) and closed at exit.
"""

from __future__ import annotations

import atexit
import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from specwire.runtime.core.errors import StoreError

if TYPE_CHECKING:
    from psycopg_pool import ConnectionPool

DEFAULT_TIMEOUT_S = 5.0


def brief(exc: BaseException) -> str:
    """An error's class and first line, without a DETAIL (which may quote row values)."""
    first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return f"{type(exc).__name__}: {first[:200]}" if first else type(exc).__name__


def _quiet(logger: logging.Logger) -> None:
    """Drop a logger's records (a handler of its own keeps ``logging.lastResort`` away)."""
    logger.propagate = False
    if not any(isinstance(h, logging.NullHandler) for h in logger.handlers):
        logger.addHandler(logging.NullHandler())


def open_pool(
    dsn: str, *, max_size: int = 10, timeout_s: float = DEFAULT_TIMEOUT_S
) -> ConnectionPool[Any]:
    """A connection pool for ``dsn`` (opened now; ``StoreError`` when the server is down)."""
    import psycopg
    from psycopg_pool import ConnectionPool, PoolTimeout

    try:
        psycopg.conninfo.conninfo_to_dict(dsn)
    except psycopg.ProgrammingError:
        # libpq's message quotes the part it could not parse, which may be the password.
        raise StoreError("the fact database's connection string is not valid") from None
    # The pool reports failed connection attempts through ``logging`` with libpq's text.
    _quiet(logging.getLogger("psycopg.pool"))
    pool: ConnectionPool[Any] = ConnectionPool(
        dsn,
        min_size=1,
        max_size=max_size,
        timeout=timeout_s,
        kwargs={
            "connect_timeout": max(1, int(timeout_s)),
            # A peer that vanished is noticed by the kernel, not only by the watchdog.
            "keepalives": 1,
            "keepalives_idle": 10,
            "keepalives_interval": 5,
            "keepalives_count": 3,
            "tcp_user_timeout": int(timeout_s * 1000) + 1000,
        },
        open=False,
    )
    try:
        pool.open(wait=True, timeout=timeout_s)
    except (PoolTimeout, psycopg.Error) as exc:
        pool.close()
        raise StoreError(f"cannot reach the fact database: {brief(exc)}") from exc
    return pool


_pools: dict[str, Any] = {}
_pools_lock = threading.Lock()


def shared_pool(dsn: str) -> ConnectionPool[Any]:
    """The process's pool for ``dsn``: opened on first use, closed at interpreter exit."""
    with _pools_lock:
        pool = _pools.get(dsn)
        if pool is None or pool.closed:
            pool = open_pool(dsn)
            if not _pools:
                atexit.register(close_shared_pools)
            _pools[dsn] = pool
        return pool


def close_shared_pools() -> None:
    """Close every pool ``shared_pool`` opened (also run at exit)."""
    with _pools_lock:
        for pool in _pools.values():
            pool.close()
        _pools.clear()


@contextmanager
def translated(what: str) -> Iterator[None]:
    """psycopg and pool errors become ``StoreError`` (their message never quotes row values)."""
    import psycopg
    from psycopg_pool import PoolTimeout

    try:
        yield
    except StoreError:
        raise
    except PoolTimeout as exc:
        raise StoreError(f"could not {what}: no database connection in time") from exc
    except psycopg.errors.QueryCanceled as exc:
        raise StoreError(f"could not {what}: the database did not answer in time") from exc
    except psycopg.Error as exc:
        state = getattr(exc, "sqlstate", None) or "?"
        raise StoreError(
            f"could not {what}: database error {state} ({type(exc).__name__})"
        ) from exc
