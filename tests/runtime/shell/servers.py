"""Real servers the egress tests open on this machine, recording every connection they see."""

from __future__ import annotations

import http.server
import os
import shutil
import socket
import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


class RecordingHTTPServer:
    """An HTTP server on 127.0.0.1 that answers ``hello <path>`` and records what it got."""

    def __init__(self) -> None:
        self.connections = 0
        self.requests: list[tuple[str, dict[str, str]]] = []
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def setup(self) -> None:
                outer.connections += 1
                super().setup()

            def do_GET(self) -> None:  # noqa: N802 (the stdlib's spelling)
                outer.requests.append((self.path, dict(self.headers.items())))
                body = f"hello {self.path}\n".encode()
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: object) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self._thread = threading.Thread(target=self.server.serve_forever, args=(0.01,), daemon=True)
        self._thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self._thread.join(timeout=5)


@contextmanager
def http_server() -> Iterator[RecordingHTTPServer]:
    server = RecordingHTTPServer()
    try:
        yield server
    finally:
        server.close()


class CountingListener:
    """A stream listener (TCP or Unix) that counts accepted connections and sends a banner."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.accepted = 0
        sock.listen(8)
        sock.settimeout(0.2)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            self.accepted += 1
            conn.sendall(b"host-service-banner\n")
            conn.close()

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
        self.sock.close()


@contextmanager
def tcp_listener() -> Iterator[tuple[CountingListener, int]]:
    """A counting listener on a loopback port of the host: its listener and port."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    listener = CountingListener(sock)
    try:
        yield listener, sock.getsockname()[1]
    finally:
        listener.close()


@contextmanager
def unix_listener() -> Iterator[tuple[CountingListener, Path]]:
    """A counting listener on a Unix socket outside any workspace, in a 0700 folder under /tmp
    (a shell could not even list it); the socket itself is open to everyone."""
    folder = Path(f"/tmp/specwire-shell-test-{uuid.uuid4().hex[:8]}")
    folder.mkdir(mode=0o700)
    path = folder / "service.sock"
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.bind(str(path))
    os.chmod(path, 0o777)
    listener = CountingListener(sock)
    try:
        yield listener, path
    finally:
        listener.close()
        shutil.rmtree(folder, ignore_errors=True)
