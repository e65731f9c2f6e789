"""Which characters spec text may hold: no lone surrogates anywhere, and no line breaks or
other control characters where a value is one line (keys, ids, settings)."""

from __future__ import annotations

import re
import unicodedata
from typing import Final

_SURROGATE: Final = re.compile(r"[\ud800-\udfff]")
# Controls (C0, DEL, C1 including U+0085), the line and paragraph separators, surrogates.
_NOT_ONE_LINE: Final = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff]")


def code_point(char: str) -> str:
    """``U+2028 (LINE SEPARATOR)``; ``U+D800`` for a character without a name."""
    name = unicodedata.name(char, "")
    return f"U+{ord(char):04X}" + (f" ({name})" if name else "")


def lone_surrogate(text: str) -> str | None:
    """The first lone surrogate in ``text`` (YAML's ``"\\ud800"`` escape makes one), if any."""
    match = _SURROGATE.search(text)
    return match.group() if match else None


def line_breaker(text: str) -> str | None:
    """The first character that has no place in a one-line value, if any."""
    match = _NOT_ONE_LINE.search(text)
    return match.group() if match else None


def scrub(value: object) -> object:
    """``value`` with every lone surrogate replaced by its escape (so it can be validated and
    shown; the value has already been refused)."""
    if isinstance(value, str):
        return _SURROGATE.sub(lambda match: f"\\u{ord(match.group()):04x}", value)
    if isinstance(value, list):
        return [scrub(item) for item in value]
    if isinstance(value, dict):
        return {scrub(key): scrub(item) for key, item in value.items()}
    return value
