"""FactStorePool: borrow and give back, the LRU bound, the idle reaper, close, stale files."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from specwire.runtime.core.clock import Clock
from specwire.runtime.core.errors import StoreError
from specwire.runtime.facts.pool import FactStorePool, Opener, open_store
from specwire.runtime.facts.store import FactStore

LONG_IDLE_S = 3600.0


def fixed_now() -> datetime:
    return datetime(2026, 7, 1, 12, 0, tzinfo=UTC)


def other_now() -> datetime:
    return datetime(2026, 7, 2, 12, 0, tzinfo=UTC)


def wait_until(condition: Callable[[], bool], what: str, timeout_s: float = 10.0) -> None:
    """Poll for something a background thread does; the bound only stops a hung test."""
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.005)


@pytest.fixture
def pools() -> Iterator[Callable[..., FactStorePool]]:
    made: list[FactStorePool] = []

    def make(
        *, max_open: int = 8, idle_s: float = LONG_IDLE_S, opener: Opener = open_store
    ) -> FactStorePool:
        pool = FactStorePool(max_open=max_open, idle_s=idle_s, opener=opener)
        made.append(pool)
        return pool

    yield make
    for pool in made:
        pool.close()


def db(tmp_path: Path, name: str) -> Path:
    return tmp_path / name / "facts" / "spec.sqlite3"


def test_a_given_back_store_is_lent_again_open(
    tmp_path: Path, pools: Callable[..., FactStorePool]
) -> None:
    pool = pools()
    first = pool.borrow(db(tmp_path, "a"), fixed_now)
    first.store.remember("the billing plan is Enterprise")
    first.release()
    assert not first.store.closed
    again = pool.borrow(db(tmp_path, "a"), fixed_now)
    assert again.store is first.store
    assert [hit.fact.text for hit in again.store.recall("billing plan")] == [
        "the billing plan is Enterprise"
    ]
    again.release()


def test_stores_are_keyed_by_resolved_path_and_clock(
    tmp_path: Path, pools: Callable[..., FactStorePool]
) -> None:
    pool = pools()
    path = db(tmp_path, "a")
    path.parent.mkdir(parents=True)
    spelled = path.parent / ".." / "facts" / path.name
    one = pool.borrow(path, fixed_now)
    same = pool.borrow(spelled, fixed_now)
    other_clock = pool.borrow(path, other_now)
    assert same.store is one.store
    assert other_clock.store is not one.store
    assert other_clock.store.clock is other_now
    for lease in (one, same, other_clock):
        lease.release()


def test_releasing_twice_gives_back_once(
    tmp_path: Path, pools: Callable[..., FactStorePool]
) -> None:
    pool = pools(max_open=1)
    first = pool.borrow(db(tmp_path, "a"), fixed_now)
    second = pool.borrow(db(tmp_path, "a"), fixed_now)
    first.release()
    first.release()  # must not count as the second borrower's return
    pool.borrow(db(tmp_path, "b"), fixed_now).release()  # evicts a: still in use
    second.store.remember("still usable")
    assert not second.store.closed
    second.release()
    wait_until(lambda: second.store.closed, "the evicted store to close")


def test_the_least_recently_used_idle_store_is_evicted_and_closed(
    tmp_path: Path, pools: Callable[..., FactStorePool]
) -> None:
    pool = pools(max_open=2)
    stores: dict[str, FactStore] = {}
    for name in ("a", "b", "a", "c"):  # a is used again after b: b is the oldest
        lease = pool.borrow(db(tmp_path, name), fixed_now)
        stores[name] = lease.store
        lease.release()
    assert pool.pooled_paths() == [db(tmp_path, "a"), db(tmp_path, "c")]
    wait_until(lambda: stores["b"].closed, "the evicted store to close")
    assert not stores["a"].closed and not stores["c"].closed


def test_the_bound_never_closes_a_store_a_turn_is_using(
    tmp_path: Path, pools: Callable[..., FactStorePool]
) -> None:
    pool = pools(max_open=1)
    held = pool.borrow(db(tmp_path, "a"), fixed_now)
    other = pool.borrow(db(tmp_path, "b"), fixed_now)
    other.release()
    assert pool.pooled_paths() == [db(tmp_path, "b")]
    held.store.remember("written after eviction")  # still open for its turn
    assert held.store.size() == 1
    fresh = pool.borrow(db(tmp_path, "a"), fixed_now)  # a new store for a: the old one is out
    assert fresh.store is not held.store
    assert fresh.store.size() == 1
    fresh.release()
    assert not held.store.closed
    held.release()
    wait_until(lambda: held.store.closed, "the evicted store to close on its last return")


def test_idle_stores_are_closed_by_the_reaper_and_busy_ones_are_not(
    tmp_path: Path, pools: Callable[..., FactStorePool]
) -> None:
    pool = pools(idle_s=0.05)
    busy = pool.borrow(db(tmp_path, "busy"), fixed_now)
    idle = pool.borrow(db(tmp_path, "idle"), fixed_now)
    idle.release()
    wait_until(lambda: idle.store.closed, "the idle store to be reaped")
    assert pool.pooled_paths() == [db(tmp_path, "busy")]
    assert not busy.store.closed
    busy.release()
    wait_until(lambda: busy.store.closed, "the store to be reaped once idle")
    assert pool.pooled_paths() == []


def test_the_reaper_closes_stores_on_its_own_thread(
    tmp_path: Path, pools: Callable[..., FactStorePool]
) -> None:
    closed_on: list[str] = []

    class Recording(FactStore):
        def close(self) -> None:
            closed_on.append(threading.current_thread().name)
            super().close()

    def opener(path: Path, now: Clock) -> FactStore:
        store = Recording(path, now)
        store._file.open()
        return store

    pool = pools(idle_s=0.05, opener=opener)
    lease = pool.borrow(db(tmp_path, "a"), fixed_now)
    lease.store.remember("a fact")
    lease.release()
    wait_until(lambda: lease.store.closed, "the idle store to be reaped")
    assert closed_on == ["specwire-fact-store-reaper"]


def test_close_closes_idle_stores_now_and_busy_ones_on_return(
    tmp_path: Path, pools: Callable[..., FactStorePool]
) -> None:
    pool = pools()
    idle = pool.borrow(db(tmp_path, "idle"), fixed_now)
    idle.release()
    busy = pool.borrow(db(tmp_path, "busy"), fixed_now)
    pool.close()
    assert idle.store.closed
    assert not busy.store.closed
    busy.store.remember("the turn finishes its work")
    busy.release()
    assert busy.store.closed
    late = pool.borrow(db(tmp_path, "idle"), fixed_now)  # a closed pool pools nothing
    assert late.store is not idle.store and pool.pooled_paths() == []
    late.release()
    assert late.store.closed


def test_a_file_moved_aside_is_reopened_at_the_path(
    tmp_path: Path, pools: Callable[..., FactStorePool]
) -> None:
    pool = pools()
    path = db(tmp_path, "a")
    lease = pool.borrow(path, fixed_now)
    lease.store.remember("a fact in the damaged file")
    lease.release()
    os.rename(path, path.with_name("damaged.sqlite3"))
    with FactStore.open(path, now=fixed_now) as replacement:
        replacement.remember("a fact in the restored file")

    reopened = pool.borrow(path, fixed_now)
    assert reopened.store is not lease.store
    assert [e.fact.text for e in reopened.store.list_facts()] == ["a fact in the restored file"]
    reopened.release()
    wait_until(lambda: lease.store.closed, "the stale store to close")


def test_a_removed_file_is_reopened_as_an_empty_store(
    tmp_path: Path, pools: Callable[..., FactStorePool]
) -> None:
    pool = pools()
    path = db(tmp_path, "a")
    lease = pool.borrow(path, fixed_now)
    lease.store.remember("a fact")
    lease.release()
    for leftover in path.parent.iterdir():
        leftover.unlink()

    reopened = pool.borrow(path, fixed_now)
    assert reopened.store is not lease.store
    assert reopened.store.size() == 0
    reopened.store.remember("written to a new file")  # the old store would refuse this write
    reopened.release()


def test_a_store_a_borrower_closed_is_not_lent_again(
    tmp_path: Path, pools: Callable[..., FactStorePool]
) -> None:
    pool = pools()
    lease = pool.borrow(db(tmp_path, "a"), fixed_now)
    lease.store.close()
    lease.release()
    again = pool.borrow(db(tmp_path, "a"), fixed_now)
    assert again.store is not lease.store and not again.store.closed
    again.release()


def test_two_threads_opening_one_store_at_once_end_up_sharing_it(
    tmp_path: Path, pools: Callable[..., FactStorePool]
) -> None:
    both_opening = threading.Barrier(2, timeout=10)
    opened: list[FactStore] = []

    def opener(path: Path, now: Clock) -> FactStore:
        store = open_store(path, now)
        opened.append(store)
        both_opening.wait()
        return store

    pool = pools(opener=opener)
    got: list[FactStore] = []

    def borrow() -> None:
        got.append(pool.borrow(db(tmp_path, "a"), fixed_now).store)

    threads = [threading.Thread(target=borrow) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(opened) == 2 and got[0] is got[1]
    loser = next(store for store in opened if store is not got[0])
    wait_until(lambda: loser.closed, "the store opened in vain to close")


def test_a_store_that_cannot_open_raises_and_pools_nothing(
    tmp_path: Path, pools: Callable[..., FactStorePool]
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory\n")
    pool = pools()
    with pytest.raises(StoreError, match="cannot create the fact store"):
        pool.borrow(blocker / "facts" / "spec.sqlite3", fixed_now)
    assert pool.pooled_paths() == []


def test_threads_sharing_a_pooled_store_lose_no_facts(
    tmp_path: Path, pools: Callable[..., FactStorePool]
) -> None:
    pool = pools(max_open=2)
    names = [f"writer{i}" for i in range(6)]
    errors: list[BaseException] = []

    def turns(name: str) -> None:
        try:
            for turn in range(15):
                # Six writers, three paths, a bound of two: stores are shared, evicted and reopened.
                lease = pool.borrow(db(tmp_path, f"db{turn % 3}"), fixed_now)
                try:
                    lease.store.remember(f"{name} turn {turn}")
                finally:
                    lease.release()
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=turns, args=(name,)) for name in names]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    pool.close()
    texts: set[str] = set()
    for index in range(3):
        with FactStore.open(db(tmp_path, f"db{index}")) as store:
            texts.update(entry.fact.text for entry in store.list_facts())
    assert texts == {f"{name} turn {turn}" for name in names for turn in range(15)}


def test_bounds_are_checked() -> None:
    with pytest.raises(ValueError, match="max_open"):
        FactStorePool(max_open=0, idle_s=1.0)
    with pytest.raises(ValueError, match="idle_s"):
        FactStorePool(max_open=1, idle_s=0.0)
