"""Text that came from bytes which were not UTF-8, made safe to log, send and show.

Python hands undecodable bytes over as lone surrogates: ``sys.argv`` and file names decode
with ``surrogateescape`` (byte 0xFF becomes ``"\\udcff"``), and a JSON ``"\\ud800"`` escape
from a model or a client decodes to one too. Such a string cannot be encoded as UTF-8, so the
first JSON line, HTTP body or console write that meets it raises ``UnicodeEncodeError``.

The choice, per place:

- **Replacement** (U+FFFD) wherever text leaves the process or is kept: messages a person
  typed (``--message`` arguments, stdin lines), tool results (file names ``ls`` and ``grep``
  list, tool output), session-log events, console output. What the model sees, what is sealed
  as evidence and what a person reads must be valid Unicode; the lost bytes were not text.
- **surrogateescape** stays only inside the process, where Python puts it: ``os.scandir``
  and ``os.listdir`` hand back such names and the walk opens them by those strings. The name
  is shown with U+FFFD, so the model cannot pass it back to a file tool (tool input must be
  valid Unicode and is refused otherwise, with a one-line error); ``bash`` can rename it.
"""

from __future__ import annotations

from typing import Any, Final

from specwire.runtime.core.patterns import LazyPattern

REPLACEMENT: Final = "\ufffd"
_LONE_SURROGATE: Final = LazyPattern("[\ud800-\udfff]")


def valid_text(text: str) -> str:
    """``text`` with every lone surrogate replaced by U+FFFD (the same object when clean)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return _LONE_SURROGATE.sub(REPLACEMENT, text)
    return text


def valid_data(value: Any) -> Any:
    """``valid_text`` applied to every string of a JSON-like value (keys included)."""
    if isinstance(value, str):
        return valid_text(value)
    if isinstance(value, dict):
        return {valid_data(key): valid_data(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [valid_data(item) for item in value]
    return value
