"""Durations of the spec language: ``^\\d+(ms|s|m|h|d)$`` → milliseconds."""

from __future__ import annotations

import re
from typing import Final

DURATION_RE: Final = re.compile(r"([0-9]+)(ms|s|m|h|d)")

_UNIT_MS: Final[dict[str, int]] = {
    "ms": 1,
    "s": 1_000,
    "m": 60_000,
    "h": 3_600_000,
    "d": 86_400_000,
}

HOUR_MS: Final = _UNIT_MS["h"]


def parse_duration_ms(text: str) -> int | None:
    """Milliseconds for a well-formed duration, ``None`` for anything else."""
    match = DURATION_RE.fullmatch(text)
    if match is None:
        return None
    return int(match.group(1)) * _UNIT_MS[match.group(2)]
