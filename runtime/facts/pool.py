"""``FactStorePool``: fact stores a long-lived serving process keeps open across turns.

A per-turn host wires memory on every turn. Without a pool each turn opens its fact store
(connect, pragmas, ``migrate`` under ``BEGIN IMMEDIATE``) and closes it (``PRAGMA optimize``,
WAL checkpoint). With one, a turn borrows the open store for its exact path and clock and gives
it back afterwards; closing, and the maintenance that comes with it, runs on the pool's reaper
thread, off the turn path.

Nothing here is process-global: a host builds its pool (one per process that serves, after any
fork: an SQLite connection must not cross one), lends it to every turn through
``HostResources.fact_stores`` (``specwire.runtime.wiring``) and closes it when it stops.

Rules:
- A store is keyed by its resolved path **and** its clock (``FactStore`` carries the clock it
  stamps facts with). It is only ever lent for that exact key, so tenant fences are unaffected.
- Concurrent borrowers of one key share the store (one connection under its lock, as threads of
  one process always did).
- At most ``max_open`` stores stay pooled. The least recently used store that nobody is using is
  evicted first; a store still in use is never closed under its borrowers: it leaves the pool
  and is closed when its last borrower gives it back.
- A store idle for ``idle_s`` is closed by the reaper (a daemon thread).
- A store whose file was removed or replaced at its path (an owner moved a damaged file aside),
  or that a borrower closed, is not lent again: the next borrow opens the file at the path.
- ``close()`` closes every idle store at once and each store in use when it is given back.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from contextlib import suppress
from pathlib import Path

from specwire.runtime.core.clock import Clock
from specwire.runtime.core.lazy_dataclass import lazy_dataclass
from specwire.runtime.facts.store import FactStore

StoreKey = tuple[Path, Clock]
Opener = Callable[[Path, Clock], FactStore]


def open_store(path: Path, now: Clock) -> FactStore:
    return FactStore.open(path, now=now)


class FactStoreLease:
    """One borrower's hold on a store. ``release`` gives it back once (later calls do nothing)."""

    __slots__ = ("_give_back", "_once", "store")

    def __init__(self, store: FactStore, give_back: Callable[[], None]) -> None:
        self.store = store
        self._give_back = give_back
        self._once = threading.Lock()  # acquired by the first release, never released

    def release(self) -> None:
        if self._once.acquire(blocking=False):
            self._give_back()


def closing_lease(store: FactStore) -> FactStoreLease:
    """A lease on a store nobody pools: releasing it closes the store."""
    return FactStoreLease(store, store.close)


def lease_store(path: Path, now: Clock, pool: FactStorePool | None) -> FactStoreLease:
    """The fact store at ``path``: borrowed from ``pool`` when there is one, else opened for
    this caller alone (releasing the lease closes it). Raises what ``FactStore.open`` raises."""
    if pool is None:
        return closing_lease(open_store(path, now))
    return pool.borrow(path, now)


@lazy_dataclass(eq=False)
class _Pooled:
    """One open store in the pool, with its borrowers."""

    key: StoreKey
    store: FactStore
    borrowers: int = 0
    idle_since: float = 0.0
    # Out of the pool (evicted, stale or the pool closed) while borrowed: closed on last return.
    retired: bool = False


class FactStorePool:
    def __init__(
        self,
        *,
        max_open: int,
        idle_s: float,
        opener: Opener = open_store,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        if max_open < 1:
            raise ValueError(f"max_open must be at least 1 (got {max_open})")
        if idle_s <= 0:
            raise ValueError(f"idle_s must be positive (got {idle_s})")
        self._max_open = max_open
        self._idle_s = idle_s
        self._opener = opener
        self._monotonic = monotonic
        self._cond = threading.Condition()
        self._entries: OrderedDict[StoreKey, _Pooled] = OrderedDict()  # least recently used first
        self._doomed: list[FactStore] = []  # out of the pool, unused: the reaper closes them
        self._closed = False
        self._reaper = threading.Thread(
            target=self._reap, name="specwire-fact-store-reaper", daemon=True
        )
        self._reaper.start()

    def borrow(self, path: Path, now: Clock) -> FactStoreLease:
        """The pooled store for ``path`` (resolved) and ``now``, opened when there is none or
        the pooled one is stale.

        Raises what ``FactStore.open`` raises.
        """
        path = path.resolve()
        key: StoreKey = (path, now)
        with self._cond:
            lease = self._lend_pooled(key)
        if lease is not None:
            return lease
        # Opened outside the pool's lock: opening may wait on another process's write lock, and
        # other keys' turns must not wait with it.
        store = self._opener(path, now)
        with self._cond:
            if self._closed:
                return closing_lease(store)
            lease = self._lend_pooled(key)
            if lease is None:
                entry = _Pooled(key, store)
                self._entries[key] = entry
                lease = self._lend(entry)
                self._evict_over_bound()
                return lease
            self._doom(store)  # another thread opened this key meanwhile: use theirs
            return lease

    def close(self) -> None:
        """Stop the reaper and close every store; a store in use is closed when given back."""
        with self._cond:
            if self._closed:
                return
            self._closed = True
            self._cond.notify_all()
        self._reaper.join()
        with self._cond:
            for entry in list(self._entries.values()):
                self._retire(entry)
            doomed, self._doomed = self._doomed, []
        for store in doomed:
            _close_quietly(store)

    def discard(self, path: Path, now: Clock) -> None:
        """Take the store for ``path`` (resolved) and ``now`` out of the pool, if it is there:
        closed at once when idle, else when its last borrower gives it back (a caller bounding
        its own share of the pool, e.g. one tenant's stores)."""
        with self._cond:
            entry = self._entries.get((path.resolve(), now))
            if entry is not None:
                self._retire(entry)

    def pooled_paths(self) -> list[Path]:
        """The paths of the stores in the pool, least recently used first (for tests)."""
        with self._cond:
            return [key[0] for key in self._entries]

    # -- under the lock --------------------------------------------------------------------

    def _lend_pooled(self, key: StoreKey) -> FactStoreLease | None:
        entry = self._entries.get(key)
        if entry is None or self._closed:
            return None
        if entry.store.closed or entry.store.file_replaced():
            self._retire(entry)
            return None
        return self._lend(entry)

    def _lend(self, entry: _Pooled) -> FactStoreLease:
        entry.borrowers += 1
        self._entries.move_to_end(entry.key)
        return FactStoreLease(entry.store, lambda: self._give_back(entry))

    def _retire(self, entry: _Pooled) -> None:
        if self._entries.get(entry.key) is entry:
            del self._entries[entry.key]
        if entry.borrowers:
            entry.retired = True
        else:
            self._doom(entry.store)

    def _doom(self, store: FactStore) -> None:
        self._doomed.append(store)
        self._cond.notify_all()

    def _evict_over_bound(self) -> None:
        while len(self._entries) > self._max_open:
            idle = (entry for entry in self._entries.values() if not entry.borrowers)
            self._retire(next(idle, None) or next(iter(self._entries.values())))

    # -- giving back and reaping -----------------------------------------------------------

    def _give_back(self, entry: _Pooled) -> None:
        with self._cond:
            entry.borrowers -= 1
            if entry.borrowers:
                return
            if not entry.retired:
                entry.idle_since = self._monotonic()
                self._entries.move_to_end(entry.key)
                self._cond.notify_all()  # the reaper's next deadline may have moved
                return
            if not self._closed:
                self._doom(entry.store)
                return
        _close_quietly(entry.store)  # the reaper has stopped: the last borrower closes it

    def _reap(self) -> None:
        while True:
            with self._cond:
                while True:
                    due = self._take_due()
                    if due or self._closed:
                        break
                    self._cond.wait(self._until_next_due())
                stopping = self._closed
            for store in due:
                _close_quietly(store)
            if stopping:
                return

    def _take_due(self) -> list[FactStore]:
        due, self._doomed = self._doomed, []
        cutoff = self._monotonic() - self._idle_s
        for entry in list(self._entries.values()):
            if not entry.borrowers and entry.idle_since <= cutoff:
                del self._entries[entry.key]
                due.append(entry.store)
        return due

    def _until_next_due(self) -> float | None:
        idle = [entry.idle_since for entry in self._entries.values() if not entry.borrowers]
        if not idle:
            return None  # woken when a store is given back or doomed
        return max(0.0, min(idle) + self._idle_s - self._monotonic())


def _close_quietly(store: FactStore) -> None:
    # Closing runs ``PRAGMA optimize`` and may fail on a damaged file; the store has nothing left
    # to do either way, and the reaper must outlive one bad store.
    with suppress(Exception):
        store.close()
