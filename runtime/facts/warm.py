"""``keep_stores_warm()``: a long-lived serving process keeps its stores open across turns.

Per-turn hosts call ``wire_memory`` on every turn and close what it wired after the turn. While
``keep_stores_warm()`` is active (a serving host enters it around its serving loop), the fact
store is borrowed from a process-wide ``FactStorePool`` instead (see ``runtime.facts.pool`` for
its rules) and ``WiredMemory.close()`` gives it back, so a turn's wiring costs little more than
the recall itself. Without it, every call opens and closes its store as before (CLI hosts,
tests).

Nesting is safe, from one thread or several: the outermost activation creates the pool (its
``max_open`` and ``idle_s`` apply; an inner activation's are ignored) and the last exit closes
every store. Activate it in each process that serves (after a fork, not before: an SQLite
connection must not cross a fork).
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from pathlib import Path

from specwire.runtime.core.clock import Clock
from specwire.runtime.facts.pool import FactStoreLease, FactStorePool, closing_lease, open_store

__all__ = ["keep_stores_warm"]

_lock = threading.Lock()
_active: FactStorePool | None = None
_depth = 0


def keep_stores_warm(
    *, max_open: int = 64, idle_s: float = 300.0
) -> contextlib.AbstractContextManager[None]:
    """While active, ``wire_memory`` borrows open fact stores instead of opening them.

    At most ``max_open`` stores stay open (least recently used first out; a store in use is
    closed only when its turn gives it back); a store idle for ``idle_s`` seconds is closed in
    the background. Exiting the outermost activation closes every store.
    """
    if max_open < 1:
        raise ValueError(f"max_open must be at least 1 (got {max_open})")
    if idle_s <= 0:
        raise ValueError(f"idle_s must be positive (got {idle_s})")
    return _activated(max_open, idle_s)


@contextlib.contextmanager
def _activated(max_open: int, idle_s: float) -> Iterator[None]:
    global _active, _depth
    with _lock:
        if _active is None:
            _active = FactStorePool(max_open=max_open, idle_s=idle_s)
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            ending = _active if _depth == 0 else None
            if ending is not None:
                _active = None
        if ending is not None:
            ending.close()


def fact_store_lease(path: Path, now: Clock) -> FactStoreLease:
    """The fact store at ``path``: borrowed from the active pool, else opened for this caller
    alone (releasing the lease closes it). Raises what ``FactStore.open`` raises."""
    pool = _active
    if pool is None:
        return closing_lease(open_store(path, now))
    return pool.borrow(path, now)
