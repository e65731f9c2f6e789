"""What one spec's dream runs do and how often (``memory.dream`` of the spec).

``every_s`` is the window: at most one completed run per window (floor ``EVERY_FLOOR_S``).
``mode: full`` adds one bounded model session after the deterministic phase, and only with a
``budget_usd`` and a priced model (``runtime.dream.model_phase``). The thresholds are named
constants so a test, a note and the code agree on them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Final, Literal

DreamMode = Literal["deterministic", "full"]
DREAM_MODES: Final[tuple[DreamMode, ...]] = ("deterministic", "full")

EVERY_FLOOR_S: Final = 300
# Two live facts are near-duplicates when their token sets have a Jaccard similarity of at
# least this (``runtime.dream.duplicates``; equal normalized text is 1.0).
NEAR_DUPLICATE_JACCARD: Final = 0.85
FACT_STALE_AFTER_DAYS: Final = 90
ARTICLE_STALE_AFTER_DAYS: Final = 30
TRASH_RETENTION_DAYS: Final = 7
# At most this many stale fact ids / article slugs are listed in the state file (all counted).
MAX_LISTED_STALE: Final = 200


@dataclass(frozen=True)
class DreamSettings:
    every_s: int
    mode: DreamMode = "deterministic"
    budget_usd: float | None = None
    instructions: str | None = None
    near_duplicate_jaccard: float = NEAR_DUPLICATE_JACCARD
    fact_stale_after_days: int = FACT_STALE_AFTER_DAYS
    article_stale_after_days: int = ARTICLE_STALE_AFTER_DAYS
    trash_retention_days: int = TRASH_RETENTION_DAYS

    def __post_init__(self) -> None:
        if isinstance(self.every_s, bool) or not isinstance(self.every_s, int):
            raise ValueError(f"dream every must be whole seconds (got {self.every_s!r})")
        if self.every_s < EVERY_FLOOR_S:
            raise ValueError(
                f"dream every is {self.every_s}s, below the {EVERY_FLOOR_S}s (5m) floor"
            )
        if self.mode not in DREAM_MODES:
            raise ValueError(f"dream mode must be deterministic or full (got {self.mode!r})")
        budget = self.budget_usd
        if budget is not None and (not math.isfinite(budget) or budget < 0):
            raise ValueError(f"dream budget_usd must be a number ≥ 0 (got {budget!r})")
        if not 0 < self.near_duplicate_jaccard <= 1:
            raise ValueError("near_duplicate_jaccard must be in (0, 1]")
        for name in ("fact_stale_after_days", "article_stale_after_days", "trash_retention_days"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1")
