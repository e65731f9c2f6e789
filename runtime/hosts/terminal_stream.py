"""A streamed answer on the console: tokens to stdout as they arrive, tool progress to stderr.

``TerminalStream`` is the cli and crew hosts' ``StreamSink`` and the loop's ``output``:

- text deltas go to stdout as they arrive, so the first words show while the model is still
  writing; when the turn ends (``TurnDone``) only what the stream has not shown is written (a
  note the loop appended, or the whole reply when the model did not stream) and the loop's
  ``output`` call for that reply is swallowed, so the reply is never printed twice. A turn whose
  answer was streamed leaves stdout exactly as an unstreamed one: the reply and a newline. Text
  a model writes *before* its tool calls is shown too (it was written for the user), ended by a
  newline, so there stdout holds more than the final reply;
- a tool call prints one compact line while it runs (``  ↳ name  first argument``), on stderr
  and only when stderr is a terminal: logs and pipes see none;
- a ``Restart`` (a retry or fallback after the first token) is announced on stderr, always: the
  user must see that the answer starts again.

Ctrl-C (``CancelOnInterrupt``): during a turn the first Ctrl-C asks the stream to stop; the next
event raises ``StreamCancelled`` and the loop ends the turn as cancelled, keeping the session
(the prompt comes back). A second Ctrl-C in the same turn, or one at the prompt, interrupts as
before (``KeyboardInterrupt``: the host tears the session down and exits 130). A model stalled
between two events is therefore stopped by the second Ctrl-C, not the first.

Everything shown passes ``valid_text``; tool lines are also redacted and stripped of control
characters (the model writes tool arguments: no escape sequence reaches the terminal from them).
The answer's text is the model's too (and a prompt injection's): on a terminal its control
characters other than newline and tab become spaces, so it cannot clear the screen, move the
cursor over the lines above (a tool line, a restart note), retitle the window or set the
clipboard; piped, stdout keeps the reply's exact characters.
"""

from __future__ import annotations

import json
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType
from typing import TextIO

from specwire.runtime.core.patterns import LazyPattern
from specwire.runtime.core.progress import is_terminal
from specwire.runtime.core.undecodable import valid_text
from specwire.runtime.models.streaming import (
    Restart,
    StreamCancelled,
    StreamEvent,
    TextDelta,
    ToolArgumentsDelta,
    ToolCallStarted,
    ToolDone,
    ToolRunning,
    TurnDone,
)
from specwire.runtime.safety.redaction import redact

TOOL_ARGUMENT_CHARS = 60
# Arguments kept per tool call for its line; the rest of a long argument is never shown.
MAX_KEPT_ARGUMENT_CHARS = 4_096


def _printable(text: str) -> str:
    return "".join(ch if ch.isprintable() else " " for ch in valid_text(text))


# C0 controls but newline and tab, DEL, and the C1 controls (a lone U+009B is a CSI too).
_CONTROL = LazyPattern(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def terminal_safe(text: str) -> str:
    """``text`` with no control character a terminal would act on (newline and tab kept)."""
    return _CONTROL.sub(" ", text)


def first_argument(arguments_json: str) -> str:
    """The first scalar argument of a tool call, shortened: what the tool line shows."""
    try:
        value = json.loads(arguments_json)
    except ValueError:
        return ""
    if not isinstance(value, dict):
        return ""
    for item in value.values():
        if isinstance(item, str | int | float) and not isinstance(item, bool):
            text = " ".join(_printable(redact(str(item))).split())
            if len(text) > TOOL_ARGUMENT_CHARS:
                text = text[: TOOL_ARGUMENT_CHARS - 1] + "…"
            return text
    return ""


class TerminalStream:
    """One console session's view of its streamed turns (see the module docstring)."""

    def __init__(
        self,
        out: Callable[[], TextIO] = lambda: sys.stdout,
        err: Callable[[], TextIO] = lambda: sys.stderr,
        *,
        tool_lines: bool | None = None,
    ) -> None:
        self._out = out
        self._err = err
        self._tool_lines = tool_lines
        self._out_terminal: bool | None = None  # stdout is a terminal (asked once)
        self._segment: list[str] = []  # text shown for the model response being written
        self._line_open = False  # stdout holds text not yet ended by a newline
        self._swallow: str | None = None  # the reply ``output`` must not print again
        self._arguments: dict[str, list[str]] = {}
        self.in_turn = False
        self.cancel_requested = False

    # -- the loop's side ---------------------------------------------------------------------

    def __call__(self, event: StreamEvent) -> None:
        if isinstance(event, TurnDone):
            self._turn_done(event.text)  # the answer is whole: a late Ctrl-C stops nothing
            return
        if self.cancel_requested:
            self.cancel_requested = False
            self._end_line()
            self._note("[stopped: Ctrl-C]\n")
            raise StreamCancelled("interrupted by the user")
        if isinstance(event, TextDelta):
            self._segment.append(event.text)
            self._write_out(event.text)
            self._line_open = not event.text.endswith("\n")
        elif isinstance(event, ToolCallStarted):
            self._arguments[event.id] = []
        elif isinstance(event, ToolArgumentsDelta):
            kept = self._arguments.setdefault(event.id, [])
            if sum(len(piece) for piece in kept) < MAX_KEPT_ARGUMENT_CHARS:
                kept.append(event.text)
        elif isinstance(event, Restart):
            self._end_line()
            self._segment = []
            self._note(f"[restarting the answer: {_printable(redact(event.reason))}]\n")
        elif isinstance(event, ToolRunning):
            self._end_line()
            self._segment = []
            if self._shows_tools():
                shown = first_argument("".join(self._arguments.pop(event.id, [])))
                self._note(f"  ↳ {_printable(event.name)}{'  ' + shown if shown else ''}\n")
        elif isinstance(event, ToolDone) and event.is_error and self._shows_tools():
            self._note(f"  ↳ {_printable(event.name)} failed\n")

    def output(self, text: str) -> None:
        """The loop's ``output``: a reply already streamed is not printed again."""
        if self._swallow is not None and text == self._swallow:
            self._swallow = None
            return
        self._swallow = None
        self._write_out(text + "\n")
        self._line_open = False

    def turn_started(self) -> None:
        self.in_turn = True
        self.cancel_requested = False
        self._segment = []
        self._arguments = {}

    # -- internals ---------------------------------------------------------------------------

    def _turn_done(self, reply: str) -> None:
        self.in_turn = False
        self.cancel_requested = False
        shown = "".join(self._segment)
        self._segment = []
        self._arguments = {}
        if reply.startswith(shown):
            rest = reply[len(shown) :]
        else:  # not what was streamed (should not happen): show the reply as recorded
            self._end_line()
            rest = reply
        if rest:
            self._write_out(rest)
        if reply:
            self._write_out("\n")
            self._swallow = reply
        elif self._line_open:
            self._write_out("\n")
        self._line_open = False

    def _shows_tools(self) -> bool:
        if self._tool_lines is None:
            self._tool_lines = is_terminal(self._err())
        return self._tool_lines

    def _end_line(self) -> None:
        if self._line_open:
            self._write_out("\n")
            self._line_open = False

    def _write_out(self, text: str) -> None:
        stream = self._out()
        if self._out_terminal is None:
            self._out_terminal = is_terminal(stream)
        shown = valid_text(text)
        stream.write(terminal_safe(shown) if self._out_terminal else shown)
        stream.flush()

    def _note(self, text: str) -> None:
        stream = self._err()
        stream.write(valid_text(text))
        stream.flush()


class CancelOnInterrupt:
    """Ctrl-C handling for a console session that streams (see the module docstring).

    ``reading(read)`` wraps the loop's input: while it waits for a line the session is not in a
    turn, once a line is returned it is. Installed only in the main thread (where Python runs
    signal handlers); elsewhere Ctrl-C keeps its default behaviour."""

    def __init__(self, stream: TerminalStream) -> None:
        self.stream = stream

    def reading(self, read: Callable[[], str | None]) -> Callable[[], str | None]:
        def next_line() -> str | None:
            self.stream.in_turn = False
            self.stream.cancel_requested = False
            line = read()
            if line is not None:
                self.stream.turn_started()
            return line

        return next_line

    def _on_sigint(self, signum: int, frame: FrameType | None) -> None:
        if not self.stream.in_turn or self.stream.cancel_requested:
            raise KeyboardInterrupt
        self.stream.cancel_requested = True

    @contextmanager
    def installed(self) -> Iterator[None]:
        if threading.current_thread() is not threading.main_thread():
            yield
            return
        previous = signal.getsignal(signal.SIGINT)
        signal.signal(signal.SIGINT, self._on_sigint)
        try:
            yield
        finally:
            signal.signal(
                signal.SIGINT, previous if previous is not None else signal.default_int_handler
            )
