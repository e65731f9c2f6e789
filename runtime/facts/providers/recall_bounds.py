"""What every provider does with a recall's Remem fields (``RecallRequest``): the deadline and
cancel event, the topics, the types and the token budget.

The conformance suite (``runtime.facts.conformance``) checks that a provider honours them, and
the router (``runtime.facts.routing``) enforces them again on what comes back:

- a recall whose deadline passed or whose ``cancel`` is set raises ``DeadlineExceeded``
  (``give_up_if_expired``, called before the expensive step and again after it, so an answer
  that came too late is not used as if it were on time); an embedded store another thread holds
  locked is waited for no longer than the deadline either (``wait_for_lock``);
- ``search_text`` is the query widened by the topics;
- ``within_request`` keeps only hits of the asked ``types``, at most ``limit`` of them, and, with
  ``max_tokens``, the best hits whose texts together fit the budget (4 UTF-8 bytes a token), in
  rank order, stopping at the first that does not fit: a hit is whole or absent, never cut (a
  fact cut mid-sentence can say the opposite of what it says).
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
from specwire.runtime.facts.text import clip_query

# UTF-8 bytes counted as one token (the budget is an estimate, the same for every provider).
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


def time_budget_s(request: RecallRequest, default: float) -> float:
    """Seconds a call serving ``request`` may take: ``default``, or less when the request's
    deadline comes sooner (never negative)."""
    left = remaining_s(request)
    return default if left is None else max(0.0, min(default, left))


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


def search_text(request: RecallRequest) -> str:
    """The query followed by its topics (words that widen it), within the query limit."""
    if not request.topics:
        return request.query
    return clip_query(" ".join([request.query, *request.topics]))


def within_request(request: RecallRequest, hits: Iterable[ProviderHit]) -> tuple[ProviderHit, ...]:
    """``hits`` (best first) of the request's ``types``, at most ``limit``, within its token
    budget."""
    wanted = frozenset(request.types)
    budget = None if request.max_tokens is None else request.max_tokens * BYTES_PER_TOKEN
    kept: list[ProviderHit] = []
    for hit in hits:
        if wanted and hit.type not in wanted:
            continue
        if len(kept) == request.limit:
            break
        if budget is not None:
            size = len(hit.text.encode("utf-8"))
            if size > budget:
                break
            budget -= size
        kept.append(hit)
    return tuple(kept)
