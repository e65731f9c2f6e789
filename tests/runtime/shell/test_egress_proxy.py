"""The egress proxy on its Unix socket, driven with real sockets: what it refuses, what it
carries, its deadlines and its cap.

This machine has no public address to serve from, so tests that need a tunnel to succeed give
the proxy a check that admits exactly the test server's loopback address; every refusal test
runs the real check.
"""

from __future__ import annotations

import contextlib
import ipaddress
import os
import socket
import stat
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from specwire.runtime.tools.shell import egress
from specwire.runtime.tools.shell.egress import EgressProxy
from specwire.runtime.tools.shell.egress_policy import IPAddress
from tests.runtime.shell.servers import CountingListener, RecordingHTTPServer, http_server

LOOPBACK = ipaddress.ip_address("127.0.0.1")


def only_loopback(address: IPAddress) -> str | None:
    return None if address == LOOPBACK else f"{address} is not the test server"


@pytest.fixture
def proxy() -> Iterator[EgressProxy]:
    started = EgressProxy()
    yield started
    started.close()


@pytest.fixture
def test_proxy() -> Iterator[EgressProxy]:
    started = EgressProxy(check=only_loopback, max_tunnels=2, idle_timeout=5)
    yield started
    started.close()


@pytest.fixture
def server() -> Iterator[RecordingHTTPServer]:
    with http_server() as running:
        yield running


def ask(proxy: EgressProxy, request: bytes) -> tuple[bytes, socket.socket]:
    """Send ``request`` to the proxy; its reply head and the open connection."""
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    conn.settimeout(15)
    conn.connect(str(proxy.socket_path))
    # A proxy at its cap answers 503 and closes without reading: the request may meet a closed
    # socket, and the answer is still there to read (or the reset says the same).
    with contextlib.suppress(BrokenPipeError, ConnectionResetError):
        conn.sendall(request)
    data = b""
    with contextlib.suppress(ConnectionResetError):
        while b"\r\n\r\n" not in data:
            chunk = conn.recv(4096)
            if not chunk:
                break
            data += chunk
    return data, conn


def read_all(conn: socket.socket) -> bytes:
    data = b""
    while chunk := conn.recv(4096):
        data += chunk
    return data


def test_the_socket_lies_in_a_private_folder_outside_any_workspace(proxy: EgressProxy) -> None:
    assert stat.S_IMODE(proxy.folder.stat().st_mode) == 0o700
    assert stat.S_ISSOCK(proxy.socket_path.stat().st_mode)
    assert proxy.socket_path.parent == proxy.folder
    folder = proxy.folder
    proxy.close()
    assert not folder.exists()


@pytest.mark.parametrize(
    "target",
    ["127.0.0.1:{port}", "localhost:{port}", "[::ffff:127.0.0.1]:{port}", "127.1:{port}"],
)
def test_connect_to_a_loopback_service_is_refused_before_any_connection(
    proxy: EgressProxy, tcp_listener: tuple[CountingListener, int], target: str
) -> None:
    listener, port = tcp_listener
    authority = target.format(port=port)
    reply, conn = ask(proxy, f"CONNECT {authority} HTTP/1.1\r\nHost: {authority}\r\n\r\n".encode())
    body = reply + read_all(conn)
    conn.close()
    assert reply.startswith(b"HTTP/1.1 403 "), reply
    assert b"specwire-egress:" in body and b"host-service-banner" not in body
    assert listener.accepted == 0


def test_a_plain_http_request_to_a_loopback_service_is_refused(
    proxy: EgressProxy, server: RecordingHTTPServer
) -> None:
    url = f"http://127.0.0.1:{server.port}/secret"
    reply, conn = ask(proxy, f"GET {url} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode())
    conn.close()
    assert reply.startswith(b"HTTP/1.1 403 "), reply
    assert server.connections == 0


def test_a_unix_socket_path_is_not_a_destination(
    proxy: EgressProxy, unix_listener: tuple[CountingListener, Path]
) -> None:
    listener, path = unix_listener
    for target in (str(path), f"unix:{path}", f"{path}:80", f"http://unix:{path}:/x"):
        method = "GET" if target.startswith("http") else "CONNECT"
        reply, conn = ask(proxy, f"{method} {target} HTTP/1.1\r\n\r\n".encode())
        conn.close()
        # "http://unix:…" names a host called "unix": it does not resolve here (502).
        assert reply.split(b" ")[1] in (b"400", b"403", b"502"), (target, reply)
    assert listener.accepted == 0


@pytest.mark.parametrize(
    "request_bytes",
    [
        b"GET / HTTP/1.1\r\nHost: example.com\r\n\r\n",  # origin form: not a proxy request
        b"GET https://example.com/ HTTP/1.1\r\n\r\n",  # https must be tunnelled
        b"CONNECT example.com:443 HTTP/2.0\r\n\r\n",
        b"CONNECT example.com:443\r\n\r\n",
        b"\xff\xfe CONNECT\r\n\r\n",
        b"GET http://user:pw@example.com/ HTTP/1.1\r\n\r\n",
    ],
)
def test_anything_but_connect_or_absolute_http_is_a_bad_request(
    proxy: EgressProxy, request_bytes: bytes
) -> None:
    reply, conn = ask(proxy, request_bytes)
    conn.close()
    assert reply.startswith(b"HTTP/1.1 400 "), reply


def test_an_oversized_head_is_refused(proxy: EgressProxy) -> None:
    reply, conn = ask(proxy, b"CONNECT example.com:443 HTTP/1.1\r\n" + b"X: " + b"a" * 40_000)
    conn.close()
    assert reply.startswith(b"HTTP/1.1 400 "), reply


def test_a_tunnel_carries_bytes_to_a_checked_address(
    test_proxy: EgressProxy, server: RecordingHTTPServer
) -> None:
    authority = f"127.0.0.1:{server.port}"
    reply, conn = ask(test_proxy, f"CONNECT {authority} HTTP/1.1\r\n\r\n".encode())
    assert reply.startswith(b"HTTP/1.1 200 "), reply
    conn.sendall(b"GET /through-the-tunnel HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    answer = read_all(conn)
    conn.close()
    assert answer.startswith(b"HTTP/1.0 200") and b"hello /through-the-tunnel" in answer
    assert server.connections == 1


def test_an_absolute_http_request_is_forwarded_in_origin_form_without_proxy_headers(
    test_proxy: EgressProxy, server: RecordingHTTPServer
) -> None:
    request = (
        f"GET http://127.0.0.1:{server.port}/page?q=1 HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        "Proxy-Authorization: Basic c2VjcmV0\r\nProxy-Connection: keep-alive\r\n\r\n"
    )
    reply, conn = ask(test_proxy, request.encode())
    body = reply + read_all(conn)
    conn.close()
    assert b"hello /page?q=1" in body
    path, headers = server.requests[0]
    assert path == "/page?q=1"
    assert "Proxy-Authorization" not in headers and headers.get("Connection") == "close"


def test_the_cap_on_tunnels_answers_503_and_frees_with_the_tunnels(
    test_proxy: EgressProxy, server: RecordingHTTPServer
) -> None:
    authority = f"127.0.0.1:{server.port}"
    held = [ask(test_proxy, f"CONNECT {authority} HTTP/1.1\r\n\r\n".encode()) for _ in range(2)]
    assert all(reply.startswith(b"HTTP/1.1 200 ") for reply, _ in held)
    reply, extra = ask(test_proxy, f"CONNECT {authority} HTTP/1.1\r\n\r\n".encode())
    extra.close()
    assert reply.startswith(b"HTTP/1.1 503 "), reply
    for _, conn in held:
        conn.close()
    deadline = time.monotonic() + 15
    while True:  # the slots come back once the tunnels' threads see the close
        reply, conn = ask(test_proxy, f"CONNECT {authority} HTTP/1.1\r\n\r\n".encode())
        conn.close()
        if reply.startswith(b"HTTP/1.1 200 ") or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    assert reply.startswith(b"HTTP/1.1 200 "), reply


def test_an_unresolvable_name_is_a_bad_gateway(test_proxy: EgressProxy) -> None:
    reply, conn = ask(test_proxy, b"CONNECT no-such-host.invalid:443 HTTP/1.1\r\n\r\n")
    conn.close()
    assert reply.startswith(b"HTTP/1.1 502 "), reply


def test_the_shared_proxy_is_one_per_process(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(egress, "_shared", None)
    first = egress.shared_proxy()
    try:
        assert egress.shared_proxy() is first and first.pid == os.getpid()
    finally:
        first.close()
