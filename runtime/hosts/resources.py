"""What a per-turn host lends its turns: built once per process, closed when the host stops.

A channel or managed host wires memory on every turn. ``host_resources()`` builds the one
``FactStorePool`` of the process (so a conversation's fact store, and its recall index, stays
open across turns) and hands it to every ``build_turn`` inside ``HostResources``; leaving the
block closes every pooled store. Enter it in the process that serves, after any fork: an SQLite
connection must not cross one.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from specwire.runtime.core.clock import Clock, utc_now
from specwire.runtime.wiring import HostResources

# At most this many fact stores stay open (least recently used first out), one per tenant and
# spec in a managed host.
FACT_STORES_MAX_OPEN = 64
# A store nobody borrowed for this long is closed in the background.
FACT_STORES_IDLE_S = 300.0


@contextlib.contextmanager
def host_resources(
    *,
    max_open: int = FACT_STORES_MAX_OPEN,
    idle_s: float = FACT_STORES_IDLE_S,
    clock: Clock = utc_now,
) -> Iterator[HostResources]:
    """The process's resources for its turns; every pooled store is closed on the way out.

    Raises ``ValueError`` on bounds the pool refuses (``max_open`` < 1, ``idle_s`` <= 0).
    """
    from specwire.runtime.facts.pool import FactStorePool

    pool = FactStorePool(max_open=max_open, idle_s=idle_s)
    try:
        yield HostResources(fact_stores=pool, clock=clock)
    finally:
        pool.close()
