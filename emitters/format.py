"""Formatting: black (pinned in pyproject) for Python, whitespace normalization for the rest.

Every output leaves here LF-only, with no trailing whitespace on markdown lines and exactly one
trailing newline.
"""

from __future__ import annotations

import re

from black import _format_str_once
from black.mode import Mode, TargetVersion
from black.parsing import InvalidInput

LINE_LENGTH = 100
BLACK_MODE = Mode(
    target_versions={TargetVersion.PY311},
    line_length=LINE_LENGTH,
    string_normalization=True,
    magic_trailing_comma=True,
    preview=False,
)


class FormatError(RuntimeError):
    """Black refused the rendered source: a template bug."""


def normalize_newlines(text: str) -> str:
    """LF line endings and exactly one trailing newline."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text.rstrip("\n") + "\n"


def format_python(source: str, *, name: str = "<generated>") -> str:
    """One black pass. ``black.format_str`` formats a second time whenever the first pass changed
    anything (a pass can add trailing commas that the next one reads as magic); on generated code
    that second pass costs as much as the first and changes nothing: tests check that one pass
    gives ``format_str``'s bytes on every example and on generated hostile specs, and black is
    pinned exactly, so this private function cannot move under us unnoticed."""
    try:
        formatted = _format_str_once(normalize_newlines(source), mode=BLACK_MODE)
    except InvalidInput as exc:
        raise FormatError(f"{name}: black cannot parse the rendered source: {exc}") from exc
    return normalize_newlines(formatted)


_BLANK_RUNS = re.compile(r"\n{3,}")


def format_markdown(text: str) -> str:
    """Trailing spaces stripped, runs of blank lines folded to one."""
    lines = [line.rstrip() for line in normalize_newlines(text).split("\n")]
    return normalize_newlines(_BLANK_RUNS.sub("\n\n", "\n".join(lines)).lstrip("\n"))
