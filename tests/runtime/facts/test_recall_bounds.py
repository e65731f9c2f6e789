"""``recall_bounds``: what every built-in provider does with a recall's deadline, cancel, types
and token budget (the conformance suite checks the providers; this checks the helpers)."""

from __future__ import annotations

import threading
import time

import pytest

from specwire.runtime.facts.providers.protocol import DeadlineExceeded, ProviderHit, RecallRequest
from specwire.runtime.facts.providers.recall_bounds import (
    give_up_if_expired,
    wait_for_lock,
    within_request,
)


def hit(n: int, size: int, kind: str | None = None) -> ProviderHit:
    return ProviderHit(f"mem_{n:016x}", "x" * size, (), 0.5, False, type=kind)


def test_the_token_budget_keeps_the_best_hits_that_fit_in_rank_order() -> None:
    hits = [hit(1, 30), hit(2, 50), hit(3, 10), hit(4, 10)]
    budget = RecallRequest("q", 5, max_tokens=20)  # 80 bytes
    assert [h.id for h in within_request(budget, hits)] == [hits[0].id, hits[1].id]
    # It stops at the first hit that does not fit: the ranking is never reordered.
    assert within_request(RecallRequest("q", 5, max_tokens=5), hits) == ()
    assert within_request(RecallRequest("q", 5), hits) == tuple(hits)
    multibyte = ProviderHit("mem_00000000000000aa", "ü" * 10, (), 0.5, False)  # 20 bytes
    assert within_request(RecallRequest("q", 5, max_tokens=4), [multibyte]) == ()
    assert within_request(RecallRequest("q", 5, max_tokens=5), [multibyte]) == (multibyte,)


def test_types_keep_only_hits_of_those_types() -> None:
    hits = [hit(1, 1, "decision"), hit(2, 1), hit(3, 1, "procedure")]
    kept = within_request(RecallRequest("q", 5, types=("decision", "procedure")), hits)
    assert [h.id for h in kept] == [hits[0].id, hits[2].id]


def test_an_expired_or_cancelled_request_gives_up() -> None:
    give_up_if_expired(RecallRequest("q", 5, deadline=time.monotonic() + 60))
    with pytest.raises(DeadlineExceeded, match="deadline passed"):
        give_up_if_expired(RecallRequest("q", 5, deadline=time.monotonic() - 1))
    cancel = threading.Event()
    give_up_if_expired(RecallRequest("q", 5, cancel=cancel))
    cancel.set()
    with pytest.raises(DeadlineExceeded, match="cancelled"):
        give_up_if_expired(RecallRequest("q", 5, cancel=cancel))


def test_a_held_lock_is_waited_for_until_the_caller_cancels() -> None:
    lock = threading.RLock()
    cancel = threading.Event()
    held, release, outcome = threading.Event(), threading.Event(), []

    def holder() -> None:
        with lock:
            held.set()
            release.wait(30)

    def waiter() -> None:
        try:
            wait_for_lock(lock, RecallRequest("q", 5, cancel=cancel))
        except DeadlineExceeded as exc:
            outcome.append(f"gave up: {exc}")
        else:
            outcome.append("got the lock")

    threading.Thread(target=holder, daemon=True).start()
    assert held.wait(10)
    waiting = threading.Thread(target=waiter, daemon=True)
    waiting.start()
    cancel.set()
    waiting.join(30)
    assert outcome == ["gave up: recall: cancelled by the caller"]
    assert not release.is_set()  # it gave up while the lock was still held
    release.set()
    # A free lock is taken and let go; without a deadline or cancel it is not even looked at.
    wait_for_lock(lock, RecallRequest("q", 5, deadline=time.monotonic() + 60))
    assert lock.acquire(blocking=False)
    lock.release()
    wait_for_lock(lock, RecallRequest("q", 5))
    with lock:  # held by the calling thread (a store calling back into itself): re-entrant
        wait_for_lock(lock, RecallRequest("q", 5, deadline=time.monotonic() + 60))
