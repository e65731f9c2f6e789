"""Statements under deadlines: the server's ``statement_timeout`` in every transaction, and a
client-side deadline (a watchdog thread) for when the network hangs.
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

# The client-side deadline is the statement deadline plus this (connection wait, round trips).
WATCHDOG_MARGIN_S = 1.0
_T = TypeVar("_T")
_watchdog_pool: ThreadPoolExecutor | None = None
_watchdog_lock = threading.Lock()


def _watchdog() -> ThreadPoolExecutor:
    global _watchdog_pool
    with _watchdog_lock:
        if _watchdog_pool is None:
            _watchdog_pool = ThreadPoolExecutor(max_workers=32, thread_name_prefix="specwire-pg")
        return _watchdog_pool
