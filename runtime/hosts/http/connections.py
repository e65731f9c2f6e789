"""Slow clients cannot hold a server's connections: a header deadline and reaping at the limit.

uvicorn has no deadline for reading a request's headers, and its ``limit_concurrency`` counts
every open connection: 1,005 clients that connected and sent half a request line made every
other request a 503 for as long as they stayed. The HTTP protocol here (uvicorn's h11 protocol,
extended) fixes both:

- **header deadline**: a connection waiting for a request's headers — just accepted, or kept
  alive after a response — is closed when they are not complete within ``header_deadline_s``
  (trickling a byte at a time does not extend it). Bodies have their own deadline
  (``runtime.hosts.http.common.read_body``).
- **reaping at the limit**: a connection accepted when ``max_connections`` are open closes the
  connection that has waited longest for its headers, so the newcomer is served; only when every
  open connection has a request in flight does a newcomer get uvicorn's 503.

So healthy clients are served while any number of slow ones wait, and the slow ones are gone
after ``header_deadline_s``. ``raise_open_file_limit`` lets the process hold that many sockets.
"""

from __future__ import annotations

import asyncio
import resource
from typing import Any, Final

HEADER_DEADLINE_S: Final = 10.0
# Connections one server process holds (run several behind a proxy for more).
MAX_CONNECTIONS: Final = 1000
# Descriptors beyond the connections: the listening socket, stores, logs, the event loop's own.
_SPARE_FILES: Final = 256


def raise_open_file_limit(max_connections: int) -> int:
    """Raise the soft limit on open files towards the hard limit so ``max_connections``
    sockets (and the files a turn opens) fit; returns the soft limit now in force."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = max_connections + _SPARE_FILES
    if soft != resource.RLIM_INFINITY and soft < wanted:
        target = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
            soft = target
        except (ValueError, OSError):
            pass  # as it was: the connection limit still answers 503 past what fits
    return soft


def guarded_protocol_class(
    *, max_connections: int = MAX_CONNECTIONS, header_deadline_s: float = HEADER_DEADLINE_S
) -> type[asyncio.Protocol]:
    """uvicorn's h11 protocol with a header deadline and reaping at ``max_connections``; pass
    it as ``uvicorn.Config(http=...)`` with ``limit_concurrency=max_connections``."""
    from uvicorn.protocols.http.h11_impl import H11Protocol

    class GuardedHTTPProtocol(H11Protocol):
        # When the connection started waiting for the headers of its next request (None while
        # a request is in flight), and the cycle it was on then (a new one means they came).
        _waiting_since: float | None = None
        _waiting_cycle: Any = None
        _header_timer: asyncio.TimerHandle | None = None

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self._wait_for_headers()
            _reap_if_full(self)

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            self._check_started()

        def on_response_complete(self) -> None:
            before = self.cycle
            super().on_response_complete()
            if self.cycle is before and not self.transport.is_closing():
                self._wait_for_headers()  # kept alive: the next request's headers have a deadline
            else:
                self._check_started()  # a pipelined request started, or the connection ends

        def connection_lost(self, exc: Exception | None) -> None:
            self._stop_waiting()
            super().connection_lost(exc)

        # -- the deadline ----------------------------------------------------------------

        def _wait_for_headers(self) -> None:
            self._stop_waiting()
            self._waiting_since = self.loop.time()
            self._waiting_cycle = self.cycle
            self._header_timer = self.loop.call_later(header_deadline_s, self._headers_late)

        def _check_started(self) -> None:
            if self._waiting_since is not None and self.cycle is not self._waiting_cycle:
                self._stop_waiting()

        def _stop_waiting(self) -> None:
            self._waiting_since = None
            if self._header_timer is not None:
                self._header_timer.cancel()
                self._header_timer = None

        def _headers_late(self) -> None:
            self._header_timer = None
            if self._waiting_since is not None and self.cycle is self._waiting_cycle:
                self._stop_waiting()
                self.transport.close()

    def _reap_if_full(newcomer: GuardedHTTPProtocol) -> None:
        connections = newcomer.connections
        if len(connections) < max_connections:
            return
        oldest: GuardedHTTPProtocol | None = None
        oldest_since = 0.0
        for connection in connections:
            if connection is newcomer or not isinstance(connection, GuardedHTTPProtocol):
                continue
            since = connection._waiting_since
            if since is not None and (oldest is None or since < oldest_since):
                oldest, oldest_since = connection, since
        if oldest is not None:
            oldest._stop_waiting()
            # Gone from the connection count before the newcomer's headers are read: the
            # transport calls connection_lost on the loop's next pass.
            oldest.transport.close()

    return GuardedHTTPProtocol
