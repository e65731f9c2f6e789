"""Formatting: black (pinned in pyproject) for Python, whitespace normalization for the rest.

Every output leaves here LF-only, with no trailing whitespace on markdown lines and exactly one
trailing newline. black is imported on the first Python file, not with this module: a build
whose black runs in a ``FormatWorker`` (``emitters.format_worker``) never imports it here.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import lru_cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from black.mode import Mode

LINE_LENGTH = 100

# Formats normalized source (text, file name) elsewhere: the formatted text, or None when it
# could not (black then runs in this process). Set only inside ``formatting_with``.
RemoteFormat = Callable[[str, str], str | None]
_remote: list[RemoteFormat] = []


class FormatError(RuntimeError):
    """Black refused the rendered source: a template bug."""


@lru_cache(maxsize=1)
def black_mode() -> Mode:
    from black.mode import Mode, TargetVersion

    return Mode(
        target_versions={TargetVersion.PY311},
        line_length=LINE_LENGTH,
        string_normalization=True,
        magic_trailing_comma=True,
        preview=False,
    )


def normalize_newlines(text: str) -> str:
    """LF line endings and exactly one trailing newline."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text.rstrip("\n") + "\n"


@contextmanager
def formatting_with(remote: RemoteFormat) -> Iterator[None]:
    """``format_python`` asks ``remote`` first while the block runs."""
    _remote.append(remote)
    try:
        yield
    finally:
        _remote.remove(remote)


def format_python(source: str, *, name: str = "<generated>") -> str:
    """One black pass (here, or in the remote formatter the build started)."""
    normalized = normalize_newlines(source)
    if _remote:
        formatted = _remote[-1](normalized, name)
        if formatted is not None:
            return formatted
    return format_here(normalized, name=name)


def format_here(source: str, *, name: str = "<generated>") -> str:
    """One black pass in this process. ``black.format_str`` formats a second time whenever the
    first pass changed anything (a pass can add trailing commas that the next one reads as
    magic); on generated code that second pass costs as much as the first and changes nothing:
    tests check that one pass gives ``format_str``'s bytes on every example and on generated
    hostile specs, and black is pinned exactly, so this private function cannot move under us
    unnoticed."""
    from black import _format_str_once
    from black.parsing import InvalidInput

    try:
        formatted = _format_str_once(normalize_newlines(source), mode=black_mode())
    except InvalidInput as exc:
        raise FormatError(f"{name}: black cannot parse the rendered source: {exc}") from exc
    return normalize_newlines(formatted)


_BLANK_RUNS = re.compile(r"\n{3,}")


def format_markdown(text: str) -> str:
    """Trailing spaces stripped, runs of blank lines folded to one."""
    lines = [line.rstrip() for line in normalize_newlines(text).split("\n")]
    return normalize_newlines(_BLANK_RUNS.sub("\n\n", "\n".join(lines)).lstrip("\n"))
