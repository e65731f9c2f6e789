"""What ``codegen`` shows on a terminal only: colours and build progress.

Colour is used only when the stream is a terminal, ``NO_COLOR`` is unset or empty
(https://no-color.org) and ``TERM`` is not ``dumb``; piped or redirected output is plain text,
byte for byte what it would be without this module. Progress (``[3/100] path``) goes to stderr,
only on a terminal, on one line that is cleared when the build is done.
"""

from __future__ import annotations

import os
import re
from typing import TextIO

_LOCATED = re.compile(r"^(?P<where>[^\n]*?:\d+:\d+:)(?P<key> [^:\n]+:)?(?P<rest>.*)$", re.DOTALL)
_RESET = "\x1b[0m"
_BOLD = "\x1b[1m"
_RED = "\x1b[31m"
_GREEN = "\x1b[32m"
_YELLOW = "\x1b[33m"
_CYAN = "\x1b[36m"
_CLEAR_LINE = "\r\x1b[2K"


def is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def wants_colour(stream: TextIO) -> bool:
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("TERM") == "dumb":
        return False
    return is_terminal(stream)


class Style:
    """Paints lines for one stream; a no-op when the stream should stay plain."""

    def __init__(self, colour: bool) -> None:
        self.colour = colour

    @classmethod
    def for_stream(cls, stream: TextIO) -> Style:
        return cls(wants_colour(stream))

    def _paint(self, text: str, *codes: str) -> str:
        return f"{''.join(codes)}{text}{_RESET}" if self.colour and text else text

    def error(self, line: str) -> str:
        """``file:line:col: key: message`` with the location and key stand out; other lines
        (``codegen: cannot write …``) in red."""
        if not self.colour:
            return line
        match = _LOCATED.match(line)
        if match is None:
            return self._paint(line, _RED)
        where = self._paint(match["where"], _BOLD)
        key = self._paint(match["key"] or "", _BOLD, _RED)
        return f"{where}{key}{match['rest']}"

    def ok(self, line: str) -> str:
        return self._paint(line, _GREEN)

    def warn(self, line: str) -> str:
        return self._paint(line, _YELLOW)

    def note(self, line: str) -> str:
        return self._paint(line, _CYAN)


class ProgressLine:
    """``[done/total] path`` on one terminal line; silent when the stream is not a terminal."""

    def __init__(self, stream: TextIO, *, enabled: bool | None = None) -> None:
        self.stream = stream
        self.enabled = is_terminal(stream) if enabled is None else enabled
        self._shown = False

    def __call__(self, done: int, total: int, shown: str) -> None:
        if not self.enabled or total < 2:
            return
        width = len(str(total))
        self.stream.write(f"{_CLEAR_LINE}[{done:>{width}}/{total}] {shown}")
        self.stream.flush()
        self._shown = True

    def clear(self) -> None:
        if self._shown:
            self.stream.write(_CLEAR_LINE)
            self.stream.flush()
            self._shown = False
