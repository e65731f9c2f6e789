"""What every provider does with a recall's Remem fields: the deadline and cancel event, the
topics, the types and the token budget (``RecallRequest``).

A provider calls ``check_deadline`` before and after its expensive step (a query, a scan) and
``bounded`` on what it found: only the asked types, at most ``limit`` hits, and texts within
``max_tokens`` (4 UTF-8 bytes a token; the hit that crosses the budget is cut, the rest
dropped). ``search_text`` is the query widened by the topics.
"""

from __future__ import annotations

import dataclasses
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
# A hit cut to fit the budget keeps at least this many tokens of text; with less room left it
# is dropped instead (a few words of a fact mislead more than they help).
MIN_CUT_TOKENS = 8


def check_deadline(request: RecallRequest, what: str) -> None:
    """Raise ``DeadlineExceeded`` when the caller's deadline passed or it cancelled."""
    if request.cancel is not None and request.cancel.is_set():
        raise DeadlineExceeded(f"{what}: the recall was cancelled")
    if request.deadline is not None and time.monotonic() >= request.deadline:
        raise DeadlineExceeded(f"{what}: the recall's deadline passed")


def remaining_s(request: RecallRequest, default: float) -> float:
    """Seconds left before the deadline, at most ``default`` (``default`` without one)."""
    if request.deadline is None:
        return default
    return max(0.0, min(default, request.deadline - time.monotonic()))


def search_text(request: RecallRequest) -> str:
    """The query followed by its topics (words that widen it), within the query limit."""
    if not request.topics:
        return request.query
    return clip_query(" ".join([request.query, *request.topics]))


def tokens_of(text: str) -> int:
    """The estimated tokens of ``text`` (ceil of its UTF-8 bytes over four)."""
    return -(-len(text.encode("utf-8")) // BYTES_PER_TOKEN)


def bounded(hits: Iterable[ProviderHit], request: RecallRequest) -> tuple[ProviderHit, ...]:
    """``hits`` (best first) of the asked types, at most ``limit``, within ``max_tokens``."""
    wanted = frozenset(request.types)
    kept: list[ProviderHit] = []
    budget = request.max_tokens
    for hit in hits:
        if wanted and hit.type not in wanted:
            continue
        if len(kept) == request.limit:
            break
        if budget is not None:
            cost = tokens_of(hit.text)
            if cost > budget:
                if budget >= MIN_CUT_TOKENS:
                    kept.append(dataclasses.replace(hit, text=cut_to_tokens(hit.text, budget)))
                break
            budget -= cost
        kept.append(hit)
    return tuple(kept)


def cut_to_tokens(text: str, tokens: int) -> str:
    """``text`` cut (at a character boundary, an ellipsis last) to at most ``tokens``."""
    room = tokens * BYTES_PER_TOKEN - len("…".encode())
    data = text.encode("utf-8")[: max(0, room)]
    return data.decode("utf-8", errors="ignore").rstrip() + "…"
