"""What a PostgreSQL write answers with: a fact's expiry and size, and the text its vector is
computed from (shared by every write path).
"""

from __future__ import annotations

from datetime import datetime

from specwire.runtime.facts.model import from_ms
from specwire.runtime.facts.validation import NewFact


def text_bytes(new: NewFact) -> int:
    """UTF-8 bytes of the text stored (``RetainResult.bytes``)."""
    return len(new.text.encode("utf-8"))


def embedded_text(new: NewFact) -> str:
    """What a fact's vector is computed from."""
    return " ".join([new.text, *new.tags])


def expiry(new: NewFact, now: int) -> datetime | None:
    return None if new.ttl_ms is None else from_ms(now + new.ttl_ms)


def optional_time(ms: int | None) -> datetime | None:
    return None if ms is None else from_ms(int(ms))
