"""Expired facts are swept (tombstoned) in production: at wiring time, at most once an interval.

Wiring notices a sweep is due from a stamp file beside the store (``<db>.swept``, its mtime) and
runs it in a background thread on a connection of its own, so no turn waits for it. Nothing is
created for a store that does not exist yet. ``codegen memory sweep`` sweeps on demand.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from pathlib import Path

from specwire.runtime.core.clock import Clock
from specwire.runtime.facts.store import FactStore

SWEEP_INTERVAL_S = 3600.0
_running: set[str] = set()
_running_lock = threading.Lock()


def stamp_path(db: Path) -> Path:
    return db.with_name(db.name + ".swept")


def sweep_if_due(
    db: Path,
    now: Clock,
    log: Callable[[str], None],
    *,
    interval_s: float = SWEEP_INTERVAL_S,
) -> threading.Thread | None:
    """Start a background sweep of ``db`` when the last one is older than ``interval_s``;
    the thread (for tests to join), or None when none was due or one is already running."""
    if not db.is_file():
        return None
    stamp = stamp_path(db)
    try:
        if time.time() - stamp.stat().st_mtime < interval_s:
            return None
    except FileNotFoundError:
        pass
    key = str(db)
    with _running_lock:
        if key in _running:
            return None
        _running.add(key)
    thread = threading.Thread(
        target=_sweep, args=(db, stamp, now, log), name="specwire-sweep", daemon=True
    )
    thread.start()
    return thread


def _sweep(db: Path, stamp: Path, now: Clock, log: Callable[[str], None]) -> None:
    try:
        store = FactStore.open(db, now=now)
        try:
            result = store.sweep()
        finally:
            store.close()
        fd = os.open(stamp, os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        os.close(fd)
        os.utime(stamp)
        if result.swept:
            log(f"[memory] swept {result.swept} expired fact(s)\n")
    except Exception as exc:  # a failed sweep is retried at the next wiring; never fatal
        log(f"[memory] the expired-fact sweep failed ({exc}); it will be retried\n")
    finally:
        with _running_lock:
            _running.discard(str(db))
