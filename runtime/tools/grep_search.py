"""Run a regular expression over texts under a deadline, keeping the matches found in time.

The match runs in a child process (``grep_worker.py``, standard library only, started
with ``python -I -S``) because a backtracking match cannot be stopped inside this process; at
the deadline the child is killed and the matches it already reported are kept. This works on
every platform and in any thread (a signal-based alarm works only in the main thread). The texts
are produced lazily by the caller and fed to the child from a thread, so a search that stops
early (the match cap, the deadline) reads no more files than it needs.
"""

from __future__ import annotations

import contextlib
import json
import os
import selectors
import subprocess
import sys
import threading
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

WORKER = Path(__file__).with_name("grep_worker.py")


@dataclass(frozen=True)
class LineMatch:
    source: str
    line_no: int
    line: str


@dataclass
class RegexRun:
    matches: list[LineMatch] = field(default_factory=list)
    capped: bool = False  # there were more than ``max_matches``
    timed_out: bool = False
    failure: str | None = None  # the child failed (not our deadline)


def _frame(payload: bytes) -> bytes:
    return len(payload).to_bytes(4, "big") + payload


class _Feeder(threading.Thread):
    """Writes the header and each text to the child; the labels, in order, are kept."""

    def __init__(self, sink: IO[bytes], header: bytes, texts: Iterable[tuple[str, str]]) -> None:
        super().__init__(name="grep-feeder", daemon=True)
        self.sink = sink
        self.header = header
        self.texts = texts
        self.labels: list[str] = []
        self.stop = threading.Event()

    def run(self) -> None:
        try:
            self.sink.write(_frame(self.header))
            for label, text in self.texts:
                if self.stop.is_set():
                    break
                self.labels.append(label)
                self.sink.write(_frame(text.encode("utf-8")))
                self.sink.flush()
        except (BrokenPipeError, ValueError, OSError):
            pass  # the child stopped reading: it found enough, or was killed
        finally:
            with contextlib.suppress(OSError):
                self.sink.close()
            close = getattr(self.texts, "close", None)
            if callable(close):
                close()  # a generator releases what it holds (open directories)


def _read_until(stream: IO[bytes], deadline: float) -> tuple[bytes, bool]:
    """Everything the child writes until it closes its output (False) or the deadline (True)."""
    out = bytearray()
    fd = stream.fileno()
    with selectors.DefaultSelector() as selector:
        selector.register(fd, selectors.EVENT_READ)
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return bytes(out), True
            if not selector.select(remaining):
                continue
            chunk = os.read(fd, 65536)
            if not chunk:
                return bytes(out), False
            out += chunk


def _drain(stream: IO[bytes]) -> bytes:
    out = bytearray()
    while chunk := os.read(stream.fileno(), 65536):
        out += chunk
    return bytes(out)


def _parse(output: bytes, labels: list[str]) -> Iterator[LineMatch]:
    for raw in output.split(b"\n")[:-1]:  # the last piece is empty or a torn line: dropped
        index, line_no, line = raw.decode("utf-8", "replace").split("\t", 2)
        yield LineMatch(labels[int(index)], int(line_no), line)


def search_lines(
    pattern: str,
    texts: Iterable[tuple[str, str]],
    *,
    max_matches: int,
    max_line_chars: int,
    deadline: float,
) -> RegexRun:
    """Lines of ``texts`` (``(label, text)`` pairs) that ``pattern`` matches, in order, until
    ``max_matches`` (``capped``) or ``deadline`` (``time.monotonic()``; ``timed_out``)."""
    header = json.dumps({"pattern": pattern, "max": max_matches, "width": max_line_chars})
    child = subprocess.Popen(
        [sys.executable, "-I", "-S", str(WORKER)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert child.stdin is not None and child.stdout is not None
    feeder = _Feeder(child.stdin, header.encode("utf-8"), texts)
    feeder.start()
    try:
        output, timed_out = _read_until(child.stdout, deadline)
        if timed_out:
            child.kill()
        feeder.stop.set()
        code = child.wait()
        output += _drain(child.stdout)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
        feeder.join()
        child.stdout.close()
    matches = list(_parse(output, feeder.labels))
    run = RegexRun(matches[:max_matches], len(matches) > max_matches, timed_out)
    if not timed_out and code != 0:
        run.failure = f"the search process failed (exit status {code})"
    return run
