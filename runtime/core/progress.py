"""Progress of long work on a terminal: one line on stderr, redrawn in place, gone at the end.

``Progress`` draws only when its stream is a terminal (stderr by default) and only once the work
has taken longer than ``delay`` seconds, so piped output, logs and fast runs see nothing at all.
It never writes to stdout: a command's own output stays byte-identical with or without it. The
line is redrawn at most every ``interval`` seconds and erased when the work ends, whatever way
it ends (``with Progress(...)``), so what the command prints next starts on a clean line.

Counting is cheap enough for a loop over a million rows: ``track`` adds nothing to an iterable
when the display is off, and otherwise reads the clock once per ``_CHECK_EVERY`` items.

Work that reports no steps (one call into a store) runs inside ``ticking()``: a daemon thread
redraws the line every second with the seconds elapsed, so the terminal shows it is alive. The
thread exists only while the display is on.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from types import TracebackType
from typing import TextIO, TypeVar

Item = TypeVar("Item")

DEFAULT_DELAY_S = 0.5
DEFAULT_INTERVAL_S = 0.1
TICK_S = 1.0
_CHECK_EVERY = 512
_ERASE = "\r\x1b[K"
_MAX_WIDTH = 100


def is_terminal(stream: TextIO) -> bool:
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty()) if isatty is not None else False
    except (OSError, ValueError):  # closed or detached
        return False


class Progress:
    """``label: done/total (pct%) note`` on one line; ``total`` may be unknown (``None``)."""

    def __init__(
        self,
        label: str,
        total: int | None = None,
        *,
        stream: TextIO | None = None,
        enabled: bool | None = None,
        delay: float = DEFAULT_DELAY_S,
        interval: float = DEFAULT_INTERVAL_S,
        tick: float = TICK_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.label = label
        self.total = total
        self.done = 0
        self.note = ""
        self._stream = stream if stream is not None else sys.stderr
        self.enabled = is_terminal(self._stream) if enabled is None else enabled
        self._clock = clock
        self._show_at = clock() + delay
        self._interval = interval
        self._tick = tick
        self._drawn_at: float | None = None
        self._started = clock()
        self._ticking = False
        self._lock = threading.Lock()

    def __enter__(self) -> Progress:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    def advance(self, count: int = 1, note: str | None = None) -> None:
        self.done += count
        if note is not None:
            self.note = note
        if self.enabled:
            self._maybe_draw()

    def phase(self, note: str, total: int | None = None) -> None:
        """A new stage of the work: the note says which; the count starts again."""
        self.note, self.total, self.done = note, total, 0
        if self.enabled:
            self._maybe_draw(force=True)

    def track(self, items: Iterable[Item]) -> Iterable[Item]:
        """``items`` unchanged, counted as they are consumed."""
        if not self.enabled:
            return items
        return self._tracked(items)

    def _tracked(self, items: Iterable[Item]) -> Iterator[Item]:
        pending = 0
        for item in items:
            yield item
            pending += 1
            if pending >= _CHECK_EVERY:
                self.done += pending
                pending = 0
                self._maybe_draw()
        self.done += pending

    @contextmanager
    def ticking(self) -> Iterator[Progress]:
        """Redraw on a timer as well, with the seconds elapsed (see the module docstring)."""
        if not self.enabled:
            yield self
            return
        stop = threading.Event()

        def tick() -> None:
            while not stop.wait(self._tick) and self.enabled:
                self._maybe_draw(force=True)

        self._ticking = True
        ticker = threading.Thread(target=tick, name="progress-ticker", daemon=True)
        ticker.start()
        try:
            yield self
        finally:
            stop.set()
            ticker.join()
            self._ticking = False

    def above(self, write: Callable[[], None]) -> None:
        """Run ``write`` (a log line on the same terminal) with the progress line erased first;
        the line comes back at the next redraw."""
        with self._lock:
            if self._drawn_at is not None:
                self._write(_ERASE)
                self._drawn_at = None
            write()

    def close(self) -> None:
        """Erase the line (when one was drawn). Idempotent."""
        with self._lock:
            if self._drawn_at is not None:
                self._write(_ERASE)
                self._drawn_at = None
            self.enabled = False

    def line(self) -> str:
        if self.total:
            share = min(100, self.done * 100 // self.total)
            text = f"{self.label}: {self.done:,}/{self.total:,} ({share}%)"
        elif self.done:
            text = f"{self.label}: {self.done:,}"
        else:
            text = f"{self.label}…"
        if self.note:
            text = f"{text} {self.note}"
        if self._ticking:
            text = f"{text} {int(self._clock() - self._started)} s"
        return text if len(text) <= _MAX_WIDTH else text[: _MAX_WIDTH - 1] + "…"

    def _maybe_draw(self, *, force: bool = False) -> None:
        now = self._clock()
        if now < self._show_at:
            return
        if not force and self._drawn_at is not None and now - self._drawn_at < self._interval:
            return
        with self._lock:
            if self.enabled:
                self._drawn_at = now
                self._write(_ERASE + self.line())

    def _write(self, text: str) -> None:
        try:
            self._stream.write(text)
            self._stream.flush()
        except (OSError, ValueError):  # the terminal went away: the work goes on without it
            self.enabled = False
