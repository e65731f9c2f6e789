"""black in a forked process, imported while this one loads the spec and renders the templates.

Importing black costs a cold build more than anything but the spec models (150-250 ms: its
compiled modules, its file-discovery dependencies, and its grammar, which black rebuilds from
``Grammar.txt`` on every import). A build that compiles in this process forks a worker first;
the worker imports black while the parent reads, validates and renders, then formats each Python
file the parent sends it. The bytes are black's either way (the same pinned black runs the same
``format_here``); the worker saves wall time, not CPU time, wherever a second core is free.

Linux only (fork keeps it cheap: no second interpreter start), and only when black is not
imported yet. When the worker cannot start, dies or answers nonsense, black runs in this
process instead, so a build never depends on the worker.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from typing import BinaryIO

from specwire.emitters.format import FormatError, format_here

_OK = b"o"
_REFUSED = b"e"  # black refused the source: FormatError's message follows
_LENGTH_BYTES = 8
_ENCODING = "utf-8"
_ERRORS = "surrogatepass"


def _send(stream: BinaryIO, *parts: bytes) -> None:
    for part in parts:
        stream.write(len(part).to_bytes(_LENGTH_BYTES, "big"))
        stream.write(part)
    stream.flush()


def _receive(stream: BinaryIO) -> bytes | None:
    """One length-prefixed part, or None at end of stream (or a short read)."""
    head = stream.read(_LENGTH_BYTES)
    if len(head) != _LENGTH_BYTES:
        return None
    size = int.from_bytes(head, "big")
    body = stream.read(size)
    return body if len(body) == size else None


def _serve(requests: BinaryIO, replies: BinaryIO) -> None:
    """The worker: import black, then format (name, source) requests until the parent closes."""
    import black  # noqa: F401  (the point of the worker: imported while the parent works)

    while True:
        name = _receive(requests)
        source = _receive(requests)
        if name is None or source is None:
            return
        shown = name.decode(_ENCODING, _ERRORS)
        try:
            formatted = format_here(source.decode(_ENCODING, _ERRORS), name=shown)
        except FormatError as exc:
            _send(replies, _REFUSED, str(exc).encode(_ENCODING, _ERRORS))
            continue
        _send(replies, _OK, formatted.encode(_ENCODING, _ERRORS))


class FormatWorker:
    """A forked process that formats Python with black; ``close`` it when the build is done."""

    def __init__(self, pid: int, requests: BinaryIO, replies: BinaryIO) -> None:
        self.pid = pid
        self._requests: BinaryIO | None = requests
        self._replies = replies

    @classmethod
    def start(cls) -> FormatWorker | None:
        """A running worker, or None where none can start (black then runs in this process)."""
        if sys.platform != "linux" or "black" in sys.modules:
            return None
        to_child, from_parent = os.pipe()[::-1]
        to_parent, from_child = os.pipe()[::-1]
        try:
            pid = os.fork()
        except OSError:
            for fd in (to_child, from_parent, to_parent, from_child):
                os.close(fd)
            return None
        if pid == 0:  # the worker: never returns into the parent's code
            status = 1
            try:
                os.close(to_child)
                os.close(from_child)
                with os.fdopen(from_parent, "rb") as requests, os.fdopen(to_parent, "wb") as out:
                    _serve(requests, out)
                status = 0
            except BaseException:  # noqa: BLE001, S110  (the parent formats in-process instead)
                pass
            finally:
                os._exit(status)
        os.close(from_parent)
        os.close(to_parent)
        return cls(pid, os.fdopen(to_child, "wb"), os.fdopen(from_child, "rb"))

    def format(self, source: str, name: str) -> str | None:
        """black's output for ``source``; FormatError when black refused it; None when the
        worker is gone (the caller formats in-process)."""
        if self._requests is None:
            return None
        try:
            request = (name.encode(_ENCODING, _ERRORS), source.encode(_ENCODING, _ERRORS))
            _send(self._requests, *request)
            status = _receive(self._replies)
            body = _receive(self._replies)
        except OSError:
            status = body = None
        if status == _OK and body is not None:
            return body.decode(_ENCODING, _ERRORS)
        if status == _REFUSED and body is not None:
            raise FormatError(body.decode(_ENCODING, _ERRORS))
        self.close()
        return None

    def close(self) -> None:
        """End the worker and reap it. It holds nothing worth waiting for (it writes no file),
        so it is killed rather than left to finish importing black after a spec failed."""
        requests, self._requests = self._requests, None
        if requests is None:
            return
        for stream in (requests, self._replies):
            with contextlib.suppress(OSError):
                stream.close()
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.pid, signal.SIGKILL)
        with contextlib.suppress(ChildProcessError):
            os.waitpid(self.pid, 0)
