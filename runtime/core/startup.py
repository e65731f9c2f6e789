"""``collector_paused()``: a block of start-up work run with the cyclic garbage collector off.

A bundle's start imports about 170 modules and builds its wiring: tens of thousands of objects
that all live on, and the collector, run every 700 new objects, scans them 30 times for cycles
that are not there (5-10% of the start). The bundle interface's imports and a cli host's model
load and session build run inside this block. When the outermost block ends, what is alive is
frozen (``gc.freeze()``: never scanned again, as ``codegen build`` does with the compiler) and
the collector is back on, so a turn, a tool call or a server never runs without it; a block
inside another, or under a caller that turned the collector off, changes nothing.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["collector_paused"]


@contextmanager
def collector_paused() -> Iterator[None]:
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        gc.enable()
