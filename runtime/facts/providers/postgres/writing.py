"""The write paths of PostgreSQL facts: retain (plain, ``if_absent``, superseding), keyed
writes, the insert every write path goes through, and tombstones.
"""

from __future__ import annotations

from datetime import datetime

from specwire.runtime.facts.model import from_ms
from specwire.runtime.facts.validation import NewFact


def _size(new: NewFact) -> int:
    """UTF-8 bytes of the text stored (``RetainResult.bytes``)."""
    return len(new.text.encode("utf-8"))


def _embedded(new: NewFact) -> str:
    """What a fact's vector is computed from."""
    return " ".join([new.text, *new.tags])


def _expiry(new: NewFact, now: int) -> datetime | None:
    return None if new.ttl_ms is None else from_ms(now + new.ttl_ms)


def _when(ms: int | None) -> datetime | None:
    return None if ms is None else from_ms(int(ms))
