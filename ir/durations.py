"""Durations of the spec language: ``^\\d+(ms|s|m|h|d)$`` → milliseconds."""

from __future__ import annotations

import re
from typing import Final

DURATION_RE: Final = re.compile(r"([0-9]+)(ms|s|m|h|d)")

UNIT_MS: Final[dict[str, int]] = {
    "ms": 1,
    "s": 1_000,
    "m": 60_000,
    "h": 3_600_000,
    "d": 86_400_000,
}

HOUR_MS: Final = UNIT_MS["h"]
DAY_MS: Final = UNIT_MS["d"]

# A count with more digits than this saturates at ``10**_MAX_DIGITS - 1``: far above every
# ceiling the spec language sets, and clear of Python's limit on int() of long digit strings.
_MAX_DIGITS: Final = 30


def parse_duration_ms(text: str) -> int | None:
    """Milliseconds for a well-formed duration, ``None`` for anything else.

    Absurdly long counts saturate (see ``_MAX_DIGITS``): callers compare against a ceiling.
    """
    match = DURATION_RE.fullmatch(text)
    if match is None:
        return None
    digits = match.group(1).lstrip("0") or "0"
    if len(digits) > _MAX_DIGITS:
        digits = "9" * _MAX_DIGITS
    return int(digits) * UNIT_MS[match.group(2)]
