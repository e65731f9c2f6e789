"""What every built-in provider does with a recall's deadline, cancel, types and token budget.

``RecallRequest`` carries Remem's search fields; the conformance suite
(``runtime.facts.conformance``) checks that a provider honours them: a recall whose deadline
passed or whose ``cancel`` is set raises ``DeadlineExceeded`` (before the expensive step and
again after it, so an answer that came too late is not used as if it were on time), ``types``
keeps only hits of those types, and ``max_tokens`` keeps the best hits whose texts together fit
in the budget (4 UTF-8 bytes a token), in rank order, stopping at the first that does not fit.
An embedded store another thread holds locked is waited for no longer than the deadline either
(``wait_for_lock``).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable

from specwire.runtime.facts.providers.protocol import (
    DeadlineExceeded,
    ProviderHit,
    RecallRequest,
)

BYTES_PER_TOKEN = 4
# How often a wait for a lock looks at the request's ``cancel``.
CANCEL_POLL_S = 0.05


def give_up_if_expired(request: RecallRequest, operation: str = "recall") -> None:
    """Raise ``DeadlineExceeded`` when the caller cancelled or its deadline passed."""
    if request.cancel is not None and request.cancel.is_set():
        raise DeadlineExceeded(f"{operation}: cancelled by the caller")
    if request.deadline is not None and time.monotonic() >= request.deadline:
        raise DeadlineExceeded(f"{operation}: the caller's deadline passed")


def remaining_s(request: RecallRequest) -> float | None:
    """Seconds left before the request's deadline (None: it has none)."""
    if request.deadline is None:
        return None
    return request.deadline - time.monotonic()


def wait_for_lock(lock: threading.RLock, request: RecallRequest, operation: str = "recall") -> None:
    """Wait until ``lock`` is free, then let it go: a store another thread holds locked (a long
    write, a stuck one) is not searched past the request's deadline or after its ``cancel``
    (``DeadlineExceeded``). The search itself takes the lock as it always does, so concurrent
    recalls keep their overlap. Without a deadline or a cancel: returns at once."""
    if request.deadline is None and request.cancel is None:
        return
    while True:
        give_up_if_expired(request, operation)
        left = remaining_s(request)
        wait = CANCEL_POLL_S if left is None else max(0.0, min(CANCEL_POLL_S, left))
        if lock.acquire(timeout=wait):
            lock.release()
            return


def within_request(request: RecallRequest, hits: Iterable[ProviderHit]) -> tuple[ProviderHit, ...]:
    """``hits`` (best first) of the request's ``types``, within its token budget."""
    kept = [hit for hit in hits if not request.types or hit.type in request.types]
    if request.max_tokens is None:
        return tuple(kept)
    budget = request.max_tokens * BYTES_PER_TOKEN
    fitting: list[ProviderHit] = []
    for hit in kept:
        size = len(hit.text.encode("utf-8"))
        if size > budget:
            break
        budget -= size
        fitting.append(hit)
    return tuple(fitting)
