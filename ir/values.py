"""How a user's value is shown inside a message: ``(got "five")``, ``(got true)``."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Set
from typing import Final

_MAX_SHOWN: Final = 40
_NOT_PLAIN_ASCII: Final = re.compile(r"[^ -~]")


def one_line(text: str) -> str:
    """``text`` with every non-printable character (line breaks and separators, other
    controls, lone surrogates) written as a ``\\uXXXX`` escape: one printable line."""
    return _NOT_PLAIN_ASCII.sub(_printable_or_escape, text)


def _printable_or_escape(match: re.Match[str]) -> str:
    char = match.group()
    if char.isprintable():
        return char
    code = ord(char)
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def quote(text: str) -> str:
    """A string as it appears in messages: double-quoted, escaped, shortened when long."""
    shown = text if len(text) <= _MAX_SHOWN else text[: _MAX_SHOWN - 1] + "…"
    return one_line(json.dumps(shown, ensure_ascii=False))


def show(value: object) -> str:
    """A YAML-flavoured rendering of any loaded value."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return quote(value)
    if isinstance(value, float) and not math.isfinite(value):
        return ".nan" if math.isnan(value) else (".inf" if value > 0 else "-.inf")
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, Mapping):
        return "a mapping"
    if isinstance(value, list | tuple):
        return "a list"
    if isinstance(value, Set):
        return "a set"
    return str(value)  # a date or a tagged value: shown as written, unquoted like a number


def got(value: object) -> str:
    return f"(got {show(value)})"
