"""How a user's value is shown inside a message: ``(got "five")``, ``(got true)``."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Final

_MAX_SHOWN: Final = 40


def quote(text: str) -> str:
    """A string as it appears in messages: double-quoted, escaped, shortened when long."""
    shown = text if len(text) <= _MAX_SHOWN else text[: _MAX_SHOWN - 1] + "…"
    return json.dumps(shown, ensure_ascii=False)


def show(value: object) -> str:
    """A YAML-flavoured rendering of any loaded value."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return quote(value)
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, Mapping):
        return "a mapping"
    if isinstance(value, list | tuple):
        return "a list"
    return str(value)  # a date or a tagged value: shown as written, unquoted like a number


def got(value: object) -> str:
    return f"(got {show(value)})"
