"""Literal rendering: user text reaches generated code only through these functions.

Python literals use ``repr`` for strings (always a valid literal that evaluates to the same
string: quotes, backslashes, newlines and non-printable characters are escaped) and recurse
through containers. Nothing is ever pasted into code unescaped.
"""

from __future__ import annotations

import math
import re
import shlex
from collections.abc import Mapping


class LiteralError(TypeError):
    """A value with no deterministic Python literal form."""


def py_literal(value: object) -> str:
    """A Python expression for ``value`` (dict key order kept, tuples stay tuples)."""
    if value is None or isinstance(value, bool):
        return repr(value)
    if isinstance(value, int):
        return repr(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise LiteralError(f"non-finite float has no literal: {value!r}")
        return repr(value)
    if isinstance(value, str):
        return repr(value)
    if isinstance(value, Mapping):
        items = []
        for key, item in value.items():
            if not isinstance(key, str):
                raise LiteralError(f"mapping keys must be strings (got {key!r})")
            items.append(f"{py_literal(key)}: {py_literal(item)}")
        return "{" + ", ".join(items) + "}"
    if isinstance(value, tuple):
        inner = ", ".join(py_literal(item) for item in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    if isinstance(value, list):
        return "[" + ", ".join(py_literal(item) for item in value) + "]"
    raise LiteralError(f"no literal for {type(value).__name__}")


# Up to this many lines, text renders as one literal per line in parentheses (reads best in a
# diff). libcst nests an implicit concatenation one level per literal, so a few hundred lines
# exhaust the recursion limit when the bundle is verified: longer text renders as one block.
MAX_CONCATENATED_LINES = 100
# Text longer than this renders as a block too (wrapped, so no source line is wider than a
# screen): black spends seconds normalizing the quotes of a very long one-line literal.
MAX_LITERAL_CHARS = 10_000
BLOCK_WIDTH = 96

_NOT_PLAIN_ASCII = re.compile(r"[^ -~\n]")
_CLOSING_QUOTE = re.compile(r'"(?="|\Z)')
# Escaped text as runs of plain characters and single escape sequences (never cut in two).
_RUNS = re.compile(r"[^\\]+|\\(?:x[0-9a-f]{2}|u[0-9a-f]{4}|U[0-9a-f]{8}|.)")


def py_text(value: str) -> str:
    """A string literal; multi-line text becomes one literal per line, parenthesized, and long
    text one triple-quoted block."""
    if not isinstance(value, str):
        raise LiteralError(f"py_text expects a string (got {type(value).__name__})")
    lines = value.splitlines(keepends=True)
    if len(lines) > MAX_CONCATENATED_LINES or len(value) > MAX_LITERAL_CHARS:
        return py_block(value)
    if len(lines) <= 1:
        return repr(value)
    return "(\n" + "\n".join(repr(line) for line in lines) + "\n)"


def py_block(value: str) -> str:
    """One triple-quoted literal for ``value``, its lines kept as lines (a single token, so
    neither black nor libcst recurses over it).

    Backslashes are doubled, a quote that would end the literal early is escaped and every
    non-printable character (carriage returns, tabs, line separators, lone surrogates) is
    written as an escape, so only ``\\n`` breaks a line. A line longer than ``BLOCK_WIDTH``
    is wrapped with backslash-newline continuations, which are not part of the value.
    """
    escaped = _CLOSING_QUOTE.sub(r'\\"', value.replace("\\", "\\\\"))
    escaped = _NOT_PLAIN_ASCII.sub(_printable_or_escape, escaped)
    lines = [_wrapped(line) for line in escaped.split("\n")]
    return '"""\\\n' + "\n".join(lines) + '"""'


def _wrapped(line: str) -> str:
    """``line`` cut into rows of at most ``BLOCK_WIDTH`` characters, joined by continuations."""
    if len(line) <= BLOCK_WIDTH:
        return line
    rows: list[str] = []
    row: list[str] = []
    width = 0
    for run in _RUNS.findall(line):
        start = 0
        while start < len(run):
            room = BLOCK_WIDTH - width
            take = len(run) if run.startswith("\\") else min(room, len(run) - start)
            if take > room or take == 0:
                rows.append("".join(row))
                row, width = [], 0
                continue
            row.append(run[start : start + take])
            width += take
            start += take
    rows.append("".join(row))
    return "\\\n".join(rows)


def _printable_or_escape(match: re.Match[str]) -> str:
    char = match.group()
    return char if char.isprintable() else repr(char)[1:-1]


_BACKTICKS = re.compile(r"`+")


def md_code(value: str) -> str:
    """Inline markdown code that survives backticks and line breaks in ``value``."""
    flat = " ".join(value.split())
    longest = max((len(run) for run in _BACKTICKS.findall(flat)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if flat.startswith("`") or flat.endswith("`") or not flat else ""
    return f"{fence}{pad}{flat}{pad}{fence}"


_MD_SPECIAL = re.compile(r"([\\`*_\[\]<>#|!])")


def md_text(value: str) -> str:
    """Plain markdown text on one line with markdown syntax characters escaped."""
    return _MD_SPECIAL.sub(r"\\\1", " ".join(value.split()))


def sh_word(value: str) -> str:
    """One shell word (POSIX quoting) on one line."""
    return shlex.quote(" ".join(value.split()))
