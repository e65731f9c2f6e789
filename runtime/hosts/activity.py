"""Progress of sessions a person does not read token by token: research branches, crew roles.

``Activity`` prints one short stderr line per step of each labelled session (``[branch 2/3]
started: …``, ``[branch 2/3] writing…``, ``[branch 2/3] ↳ fetch https://…``, ``[branch 2/3]
done``), and only when stderr is a terminal: a pipe or a log file sees nothing, and stdout is
never touched. ``sink(label)`` is the ``StreamSink`` of one such session (None when there is
nothing to show); sessions running in threads share one ``Activity`` and each line is written
whole, under a lock.

``stop`` (optional) is asked at every event: when it says so the session's sink raises
``StreamCancelled`` (a crew role delegated to stops with the answer the user interrupted).
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from typing import TextIO

from specwire.runtime.core.progress import is_terminal
from specwire.runtime.core.undecodable import valid_text
from specwire.runtime.hosts.terminal_stream import MAX_KEPT_ARGUMENT_CHARS, first_argument
from specwire.runtime.models.streaming import (
    Restart,
    StreamCancelled,
    StreamEvent,
    StreamSink,
    TextDelta,
    ToolArgumentsDelta,
    ToolCallStarted,
    ToolDone,
    ToolRunning,
    TurnDone,
)
from specwire.runtime.safety.redaction import redact

NOTE_CHARS = 80


def _short(text: str) -> str:
    line = " ".join("".join(ch if ch.isprintable() else " " for ch in text).split())
    return line if len(line) <= NOTE_CHARS else line[: NOTE_CHARS - 1] + "…"


class Activity:
    def __init__(
        self,
        err: Callable[[], TextIO] = lambda: sys.stderr,
        *,
        enabled: bool | None = None,
        stop: Callable[[], bool] | None = None,
    ) -> None:
        self._err = err
        self.enabled = is_terminal(err()) if enabled is None else enabled
        self._stop = stop
        self._lock = threading.Lock()

    def note(self, label: str, text: str) -> None:
        if not self.enabled:
            return
        line = valid_text(f"  [{_short(label)}] {_short(redact(text))}\n")
        with self._lock:
            try:
                stream = self._err()
                stream.write(line)
                stream.flush()
            except (OSError, ValueError):
                self.enabled = False

    def sink(self, label: str) -> StreamSink | None:
        """The sink of the session ``label``; None when there is nothing to show or ask (the
        session then runs unstreamed, exactly as before)."""
        if not self.enabled and self._stop is None:
            return None
        writing = False
        arguments: dict[str, list[str]] = {}

        def on_event(event: StreamEvent) -> None:
            nonlocal writing
            if self._stop is not None and self._stop() and not isinstance(event, TurnDone):
                raise StreamCancelled("interrupted by the user")
            if isinstance(event, TextDelta):
                if not writing:
                    writing = True
                    self.note(label, "writing…")
            elif isinstance(event, ToolCallStarted):
                arguments[event.id] = []
            elif isinstance(event, ToolArgumentsDelta):
                kept = arguments.setdefault(event.id, [])
                if sum(len(piece) for piece in kept) < MAX_KEPT_ARGUMENT_CHARS:
                    kept.append(event.text)
            elif isinstance(event, ToolRunning):
                writing = False
                shown = first_argument("".join(arguments.pop(event.id, [])))
                self.note(label, f"↳ {event.name}{'  ' + shown if shown else ''}")
            elif isinstance(event, ToolDone) and event.is_error:
                self.note(label, f"↳ {event.name} failed")
            elif isinstance(event, Restart):
                writing = False
                self.note(label, f"restarting: {event.reason}")
            elif isinstance(event, TurnDone):
                self.note(label, "done")

        return on_event
