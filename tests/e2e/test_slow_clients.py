"""Slow clients cannot hold a server's connections (real uvicorn, real sockets on 127.0.0.1).

1,000 clients connect and send half a request, then stall. Before the header deadline, 1,005 of
them made ``/healthz`` answer 503 for 50 s; now a healthy client is served while they wait (the
longest-waiting stalled connection is reaped for it at the limit), and every stalled one is
closed by the server once the header deadline passes — a client trickling a byte at a time
included. Checked on ``agent.py serve`` (managed) and on ``specwire-memory-server``.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

import httpx
import pytest
from serving_support import ROOT, build_bundle, clean_env, free_port, served

from specwire.runtime.hosts.http.connections import HEADER_DEADLINE_S, MAX_CONNECTIONS

STALLED = 1_000
KEY = "sk-acme-0123456789abcdef0123"
PARTIAL = b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Never-Finished: "


def stall(host: str, port: int, count: int) -> list[socket.socket]:
    """``count`` connections that each sent half a request's headers and stop there."""
    sockets: list[socket.socket] = []
    for _ in range(count):
        sock = socket.create_connection((host, port), timeout=30)
        sock.sendall(PARTIAL)
        sockets.append(sock)
    return sockets


def closed_by_server(sock: socket.socket, timeout_s: float) -> bool:
    """Whether the server closes ``sock`` within ``timeout_s`` (EOF or a reset)."""
    sock.settimeout(timeout_s)
    try:
        while sock.recv(4096):
            pass  # a 408 or 503 body, if any, then EOF
    except TimeoutError:
        return False
    except OSError:
        return True  # reset
    return True


def trickle(sock: socket.socket, stop: threading.Event) -> None:
    """Keep sending one more header byte every half second: it must not extend the deadline."""
    while not stop.wait(0.5):
        try:
            sock.sendall(b"x")
        except OSError:
            return


def check_slow_clients_do_not_starve(url: str, healthy: httpx.Client) -> None:
    host, port = url.removeprefix("http://").rsplit(":", 1)
    with ExitStack() as cleanup:
        stalled = stall(host, int(port), STALLED)
        for sock in stalled:
            cleanup.callback(sock.close)
        trickler = stall(host, int(port), 1)[0]
        cleanup.callback(trickler.close)
        stop = threading.Event()
        cleanup.callback(stop.set)
        threading.Thread(target=trickle, args=(trickler, stop), daemon=True).start()

        # A healthy client, while 1,000 stalled ones are connected: served, not 503.
        answer = healthy.get("/healthz", timeout=15)
        assert answer.status_code == 200, answer.text
        assert answer.json()["status"] == "ok"

        # Past the header deadline every stalled connection — the trickler too — is closed.
        assert closed_by_server(trickler, HEADER_DEADLINE_S + 20)
        still_open = [sock for sock in stalled if not closed_by_server(sock, 5)]
        assert still_open == []
    again = healthy.get("/healthz", timeout=15)
    assert again.status_code == 200


@pytest.fixture(scope="module")
def managed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    base = tmp_path_factory.mktemp("slow-clients")
    agent = build_bundle(ROOT / "examples" / "managed-concierge.yaml", base / "out")
    env = clean_env(SPECWIRE_TENANT_KEY_TENANT_ACME=KEY)
    with served(agent, base / "work", env) as server:
        yield server.url
    assert "Traceback" not in server.stderr


def test_the_managed_service_serves_healthy_clients_while_1000_stall(managed: str) -> None:
    assert STALLED >= MAX_CONNECTIONS  # the old limit would have refused everyone else
    with httpx.Client(base_url=managed) as healthy:
        check_slow_clients_do_not_starve(managed, healthy)
        # A real turn goes through afterwards too.
        turn = healthy.post(
            "/v1/chat/completions",
            json={"model": "managed-concierge", "messages": [{"role": "user", "content": "hi"}]},
            headers={"authorization": f"Bearer {KEY}"},
            timeout=60,
        )
        assert turn.status_code == 200, turn.text


def test_a_kept_alive_connection_gets_a_header_deadline_for_its_next_request(
    managed: str,
) -> None:
    host, port = managed.removeprefix("http://").rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=30) as sock:
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        first = sock.recv(65536)
        assert first.startswith(b"HTTP/1.1 200")
        sock.sendall(PARTIAL)  # the next request on the same connection never finishes
        assert closed_by_server(sock, HEADER_DEADLINE_S + 20)


@contextmanager
def memory_server(root: Path) -> Iterator[str]:
    (root / "tenants" / "acme").mkdir(parents=True)
    port = free_port()
    env = {
        **clean_env(SPECWIRE_MEMORY_TOKEN_ACME="memory-token-0123456789ab"),
        "PYTHONPATH": str(ROOT / ".typing"),
    }
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "specwire.runtime.hosts.http.memory_server",
            "--root",
            str(root),
            "--port",
            str(port),
        ],
        env=env,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stderr is not None
    try:
        assert "serving 1 tenant(s)" in process.stderr.readline()
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                httpx.get(f"{url}/healthz", timeout=5)
                break
            except httpx.TransportError:
                time.sleep(0.1)
        yield url
    finally:
        process.terminate()
        process.wait(30)
        process.stderr.close()


def test_the_memory_service_serves_healthy_clients_while_1000_stall(tmp_path: Path) -> None:
    with memory_server(tmp_path) as url, httpx.Client(base_url=url) as healthy:
        check_slow_clients_do_not_starve(url, healthy)


def test_the_server_raises_its_open_file_limit_for_its_connections() -> None:
    probe = (
        "import resource; "
        "from specwire.runtime.hosts.http.connections import raise_open_file_limit as r; "
        "soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE); "
        "resource.setrlimit(resource.RLIMIT_NOFILE, (64, hard)); "
        "print(r(1000), 1256 if hard == resource.RLIM_INFINITY else min(hard, 1256))"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT / ".typing")}
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, env=env, check=True
    )
    now, expected = done.stdout.split()
    assert int(now) == int(expected)
