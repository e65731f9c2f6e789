"""Servers for the OpenComputer tests: ours served by uvicorn in a thread, and a minimal
independent endpoint written from the contract (docs/opencomputer.md, REFERENCE appendix) on
``http.server``, which records every request it receives (arrival time, headers, raw body)."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import uvicorn
from starlette.types import ASGIApp

# A hang guard: how long a test waits for a call that must give up by itself.
HANG_GUARD_S = 30.0


class UvicornThread:
    """An ASGI app served for real on 127.0.0.1 (a free port) in a thread."""

    def __init__(self, app: ASGIApp) -> None:
        self._sock = socket.socket()
        self._sock.bind(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self._sock.getsockname()[1]}"
        config = uvicorn.Config(app, log_level="warning", lifespan="off")
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(
            target=self._server.run, kwargs={"sockets": [self._sock]}, daemon=True
        )
        self._thread.start()
        deadline = time.monotonic() + 10
        while not self._server.started:
            if time.monotonic() > deadline or not self._thread.is_alive():
                raise RuntimeError("the test server did not start")
            time.sleep(0.01)

    def stop(self) -> None:
        self._server.should_exit = True
        self._thread.join(10)
        self._sock.close()


@dataclass(frozen=True)
class Seen:
    """One request as the endpoint received it."""

    at: float  # time.monotonic() at arrival
    wall: datetime
    path: str
    headers: dict[str, str]
    raw: bytes

    @property
    def body(self) -> Any:
        return json.loads(self.raw)


@dataclass(frozen=True)
class Answer:
    """What the endpoint does with one request: an HTTP answer after ``delay_s``, or it drops
    the connection without answering (``drop``)."""

    status: int = 200
    payload: Any = None
    raw: bytes | None = None
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0
    drop: bool = False


Script = Callable[[Seen, int], Answer]


def empty_memory(seen: Seen, number: int) -> Answer:
    """The contract's plain answers: empty memory to a recall, ``{result: null}`` to a tool."""
    if seen.body.get("operation") == "recall":
        return Answer(payload={"text": "", "sources": []})
    return Answer(payload={"result": None})


class ContractEndpoint:
    """The independent endpoint: POST JSON at ``path``; ``script(seen, n)`` (n: this request's
    0-based number) decides each answer."""

    def __init__(self, script: Script = empty_memory, *, path: str = "/memory") -> None:
        self.script = script
        self.path = path
        self.seen: list[Seen] = []
        self._lock = threading.Lock()
        self.release = threading.Event()  # ends every pending delay early at stop()
        endpoint = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                return None

            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                length = int(self.headers.get("content-length", "0"))
                raw = self.rfile.read(length)
                seen = Seen(
                    time.monotonic(),
                    datetime.now(UTC),
                    self.path,
                    {k.lower(): v for k, v in self.headers.items()},
                    raw,
                )
                with endpoint._lock:
                    number = len(endpoint.seen)
                    endpoint.seen.append(seen)
                answer = endpoint.script(seen, number)
                if answer.delay_s:
                    endpoint.release.wait(answer.delay_s)
                if answer.drop:
                    self.close_connection = True
                    self.connection.shutdown(socket.SHUT_RDWR)
                    return
                body = answer.raw if answer.raw is not None else json.dumps(answer.payload).encode()
                try:
                    self.send_response(answer.status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(body)))
                    for name, value in answer.headers.items():
                        self.send_header(name, value)
                    self.end_headers()
                    self.wfile.write(body)
                except (BrokenPipeError, ConnectionResetError):
                    pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}{path}"
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()

    def bodies(self) -> list[Any]:
        return [seen.body for seen in self.seen]

    def stop(self) -> None:
        self.release.set()
        self._server.shutdown()
        self._server.server_close()
