"""The host-side egress proxy behind ``bash: {network: outbound}``.

The sandbox's network namespace has only its own loopback; a relay the launcher starts in it
forwards each connection to this proxy's Unix socket, bound into the sandbox's root. The proxy
speaks HTTP ``CONNECT host:port`` (any TCP protocol, TLS included) and forwards plain-HTTP
requests written with an absolute ``http://`` URI. Every destination is parsed, resolved and
checked here (``egress_policy``): this machine, its loopback, private and link-local ranges are
refused, and the connection goes to the address that was checked. Traffic that ignores the proxy
has no route at all.

One proxy per host process, started by the first outbound call, on a socket in a private
(0700) folder; a cap on concurrent tunnels, deadlines on the request head, the connect and idle
tunnels. It writes nothing to disk and logs nothing.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import select
import shutil
import socket
import tempfile
import threading
import urllib.parse
from pathlib import Path

from specwire.runtime.tools.shell.egress_policy import (
    AddressCheck,
    Destination,
    EgressRefused,
    EgressUnresolved,
    Resolver,
    parse_authority,
    public_address_refusal,
    resolve_destination,
)

MAX_HEAD_BYTES = 16 * 1024
MAX_TUNNELS = 64
HEAD_TIMEOUT_S = 10.0
CONNECT_TIMEOUT_S = 10.0
IDLE_TIMEOUT_S = 300.0
_CHUNK = 64 * 1024
_HOP_HEADERS = frozenset(
    {b"connection", b"keep-alive", b"proxy-connection", b"proxy-authorization"}
)


class _BadRequest(Exception):
    pass


def _reply(conn: socket.socket, status: str, reason: str = "") -> None:
    body = f"specwire-egress: {reason}\n".encode() if reason else b""
    head = f"HTTP/1.1 {status}\r\nContent-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    with contextlib.suppress(OSError):
        conn.sendall(head.encode() + body)


def _read_head(conn: socket.socket) -> tuple[bytes, bytes]:
    """The request head (up to the blank line) and whatever body bytes came with it."""
    data = b""
    while b"\r\n\r\n" not in data:
        if len(data) > MAX_HEAD_BYTES:
            raise _BadRequest("request head too large")
        chunk = conn.recv(_CHUNK)
        if not chunk:
            raise _BadRequest("connection closed before the request head ended")
        data += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    if len(head) > MAX_HEAD_BYTES:
        raise _BadRequest("request head too large")
    return head, rest


def _authority(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def _forwarded_request(
    target: str, method: str, version: str, lines: list[bytes]
) -> tuple[Destination, bytes]:
    """The destination of an absolute-URI plain-HTTP request and its head in origin form."""
    url = urllib.parse.urlsplit(target)
    if url.scheme.lower() != "http" or not url.hostname or url.username or url.password:
        raise _BadRequest("only CONNECT and absolute http:// requests are proxied")
    try:
        port = url.port or 80
    except ValueError as exc:
        raise _BadRequest(f"bad port in {target[:80]!r}") from exc
    destination = parse_authority(_authority(url.hostname, port))
    path = urllib.parse.urlunsplit(("", "", url.path or "/", url.query, ""))
    kept = [line for line in lines if line.split(b":", 1)[0].strip().lower() not in _HOP_HEADERS]
    head = b"\r\n".join([f"{method} {path} {version}".encode(), *kept, b"Connection: close"])
    return destination, head + b"\r\n\r\n"


def _pump(a: socket.socket, b: socket.socket, idle: float) -> None:
    """Copy bytes both ways until both sides finished or nothing moved for ``idle`` seconds."""
    peers = {a: b, b: a}
    a.settimeout(idle)
    b.settimeout(idle)
    try:
        while peers:
            ready, _, _ = select.select(list(peers), [], [], idle)
            if not ready:
                return
            for source in ready:
                target = peers[source]
                data = source.recv(_CHUNK)
                if data:
                    target.sendall(data)
                else:
                    del peers[source]
                    with contextlib.suppress(OSError):
                        target.shutdown(socket.SHUT_WR)
    except OSError:
        return


class EgressProxy:
    """A CONNECT / absolute-URI HTTP proxy on a Unix socket, checking every destination."""

    def __init__(
        self,
        *,
        check: AddressCheck = public_address_refusal,
        resolver: Resolver = socket.getaddrinfo,
        max_tunnels: int = MAX_TUNNELS,
        connect_timeout: float = CONNECT_TIMEOUT_S,
        idle_timeout: float = IDLE_TIMEOUT_S,
    ) -> None:
        self.pid = os.getpid()
        self.folder = Path(tempfile.mkdtemp(prefix="specwire-egress-"))  # 0700
        self.socket_path = self.folder / "proxy.sock"
        self._check = check
        self._resolver = resolver
        self._connect_timeout = connect_timeout
        self._idle_timeout = idle_timeout
        self._slots = threading.BoundedSemaphore(max_tunnels)
        self._server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._server.bind(str(self.socket_path))
        os.chmod(self.socket_path, 0o600)
        self._server.listen(128)
        self._closed = threading.Event()
        self._thread = threading.Thread(target=self._accept, name="specwire-egress", daemon=True)
        self._thread.start()

    def close(self) -> None:
        if os.getpid() != self.pid:
            return  # a forked child's copy: the socket and folder are the parent's
        self._closed.set()
        with contextlib.suppress(OSError):
            self._server.shutdown(socket.SHUT_RDWR)
        self._server.close()
        self._thread.join(timeout=5)
        shutil.rmtree(self.folder, ignore_errors=True)

    def _accept(self) -> None:
        while not self._closed.is_set():
            try:
                conn, _ = self._server.accept()
            except OSError:
                if self._closed.is_set():
                    return
                continue
            if not self._slots.acquire(blocking=False):
                conn.settimeout(1.0)
                _reply(conn, "503 Service Unavailable", "too many tunnels open")
                conn.close()
                continue
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        try:
            with conn:
                conn.settimeout(HEAD_TIMEOUT_S)
                self._handle(conn)
        except OSError:
            pass
        finally:
            self._slots.release()

    def _handle(self, conn: socket.socket) -> None:
        try:
            head, rest = _read_head(conn)
            request, *lines = head.split(b"\r\n")
            parts = request.decode("ascii").split(" ")
            if len(parts) != 3 or not parts[2].startswith("HTTP/1."):
                raise _BadRequest("not an HTTP/1 request line")
            method, target, version = parts
            if method == "CONNECT":
                destination, preamble = parse_authority(target), b""
            else:
                destination, preamble = _forwarded_request(target, method, version, lines)
            upstream = self._connect(destination)
        except (_BadRequest, UnicodeDecodeError) as exc:
            _reply(conn, "400 Bad Request", str(exc) or "not an HTTP request")
            return
        except EgressRefused as exc:
            _reply(conn, "403 Forbidden", str(exc))
            return
        except EgressUnresolved as exc:
            _reply(conn, "502 Bad Gateway", str(exc))
            return
        except TimeoutError:
            _reply(conn, "504 Gateway Timeout", "the destination did not answer in time")
            return
        except OSError as exc:
            _reply(conn, "502 Bad Gateway", f"cannot connect: {exc.strerror or exc}")
            return
        with upstream:
            if method == "CONNECT":
                conn.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
                if rest:
                    upstream.sendall(rest)
            else:
                upstream.sendall(preamble + rest)
            _pump(conn, upstream, self._idle_timeout)

    def _connect(self, destination: Destination) -> socket.socket:
        """A connection to the first checked address that answers (no second lookup)."""
        failure: OSError | None = None
        for resolved in resolve_destination(
            destination, resolver=self._resolver, check=self._check
        ):
            upstream = socket.socket(resolved.family, socket.SOCK_STREAM)
            upstream.settimeout(self._connect_timeout)
            try:
                upstream.connect(resolved.sockaddr)
            except OSError as exc:
                upstream.close()
                failure = exc
                continue
            return upstream
        raise failure or OSError(f"cannot connect to {destination.host}")


_lock = threading.Lock()
_shared: EgressProxy | None = None


def shared_proxy() -> EgressProxy:
    """This process's proxy, started on first use (again in a forked child)."""
    global _shared
    with _lock:
        if _shared is None or _shared.pid != os.getpid():
            _shared = EgressProxy()
            atexit.register(_shared.close)
        return _shared
