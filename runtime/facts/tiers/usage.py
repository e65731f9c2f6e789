"""How full a note is: its size against its tier's cap, said the way Crewship says it.

``usage`` is ``"N of C bytes, P%"`` (the percentage rounded down, so 79.9% is not yet the soft
cap); an uncapped tier (``lessons``) says ``"N bytes, uncapped"``. ``entries`` are the note's
non-empty lines: what an agent asked to consolidate gets back, so it can rewrite the note in
the same turn.
"""

from __future__ import annotations

from dataclasses import dataclass

from specwire.runtime.facts.tiers.layout import SOFT_CAP_RATIO


@dataclass(frozen=True)
class Usage:
    size: int
    cap_bytes: int | None

    @property
    def pct(self) -> int | None:
        if self.cap_bytes is None:
            return None
        return self.size * 100 // self.cap_bytes

    @property
    def soft_capped(self) -> bool:
        """At or above the soft cap (80% of the cap)."""
        return self.cap_bytes is not None and self.size >= self.cap_bytes * SOFT_CAP_RATIO

    def text(self) -> str:
        if self.cap_bytes is None:
            return f"{self.size} bytes, uncapped"
        return f"{self.size} of {self.cap_bytes} bytes, {self.pct}%"


def utf8_size(text: str) -> int:
    return len(text.encode("utf-8"))


def entries(text: str) -> list[str]:
    """The note's non-empty lines, in order."""
    return [line for line in text.splitlines() if line.strip()]
