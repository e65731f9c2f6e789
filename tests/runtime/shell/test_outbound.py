"""``bash: {network: outbound}`` through the real sandbox: the shell reaches the network only
through the relay on its own loopback and the host's egress proxy, which refuses this machine.

This machine has no public address to serve from. Refusals run the real proxy (the one the
first outbound call starts); the tests that show bytes flowing end to end install a proxy whose
check admits exactly the test server's loopback address, everything else real (launcher, relay,
bound socket, proxy variables, curl or Python's urllib in the sandbox).
"""

from __future__ import annotations

import ipaddress
import shutil
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from specwire.runtime.core.tool_types import ToolResult
from specwire.runtime.tools.shell import BashInput, egress, run_bash
from specwire.runtime.tools.shell.egress import EgressProxy
from specwire.runtime.tools.shell.egress_policy import IPAddress
from specwire.runtime.tools.shell.settings import BashSettings
from tests.runtime.shell.servers import CountingListener, RecordingHTTPServer, http_server

OUTBOUND = BashSettings(network="outbound")
CURL = shutil.which("curl", path="/usr/local/bin:/usr/bin:/bin")
SYSTEM_PYTHON = shutil.which("python3", path="/usr/local/bin:/usr/bin:/bin")
LOOPBACK = ipaddress.ip_address("127.0.0.1")


def bash(work: Path, command: str, settings: BashSettings = OUTBOUND) -> ToolResult:
    return run_bash(work, BashInput(command=command, timeoutMs=60_000), settings)


def get(url: str, *, tunnel: bool = False) -> str:
    """A shell command that fetches ``url`` the way tools do: honouring the proxy variables."""
    if CURL is not None:
        return f"{CURL} -sS -m 20 {'-p ' if tunnel else ''}{url} 2>&1; echo curl=$?"
    if SYSTEM_PYTHON is None:
        pytest.skip("neither curl nor python3 in /usr")
    code = f'import urllib.request as u;print(u.urlopen("{url}",timeout=20).read().decode())'
    return f"{SYSTEM_PYTHON} -c '{code}' 2>&1; echo urllib=$?"


def raw_connect(target: str) -> str:
    """CONNECT ``target`` through the relay with bash's own /dev/tcp: no client in between."""
    return (
        "port=${HTTP_PROXY##*:}; exec 3<>/dev/tcp/127.0.0.1/$port || exit 9; "
        f"printf 'CONNECT {target} HTTP/1.1\\r\\n\\r\\n' >&3; head -c 400 <&3"
    )


@pytest.fixture
def server() -> Iterator[RecordingHTTPServer]:
    with http_server() as running:
        yield running


@pytest.fixture
def admitting_proxy(monkeypatch: pytest.MonkeyPatch) -> Iterator[EgressProxy]:
    """This process's proxy, with a check that admits only the test server's address."""

    def only_loopback(address: IPAddress) -> str | None:
        return None if address == LOOPBACK else f"{address} is not the test server"

    proxy = EgressProxy(check=only_loopback)
    monkeypatch.setattr(egress, "_shared", proxy)
    yield proxy
    proxy.close()


def test_the_shell_gets_the_relay_as_its_proxy_and_only_the_proxy_socket(tmp_path: Path) -> None:
    host_run = sorted(p for p in Path("/run").iterdir() if p.name != "specwire")
    probes = "; ".join(f"test -e {p} && echo present:{p}" for p in host_run)
    result = bash(
        tmp_path,
        'echo "$HTTP_PROXY|$HTTPS_PROXY|$http_proxy|$https_proxy|$ALL_PROXY|[$NO_PROXY]"; '
        f"test -S /run/specwire/egress.sock && echo socket-bound; {probes}; true",
    )
    first = result.text.splitlines()[0]
    urls = first.split("|")[:5]
    assert len(set(urls)) == 1 and urls[0].startswith("http://127.0.0.1:"), result.text
    assert first.endswith("|[]")
    assert "socket-bound" in result.text and "present:" not in result.text, result.text
    assert "[exit code 0]" in result.text


def test_a_loopback_service_of_the_host_is_refused_through_the_proxy(
    tmp_path: Path, tcp_listener: tuple[CountingListener, int]
) -> None:
    listener, port = tcp_listener
    with socket.create_connection(("127.0.0.1", port), timeout=5) as conn:
        assert conn.recv(64).startswith(b"host-service-banner")  # it does answer the host
    before = listener.accepted
    result = bash(
        tmp_path,
        f"{get(f'http://127.0.0.1:{port}/')}; {get(f'http://127.0.0.1:{port}/', tunnel=True)}; "
        f"{raw_connect(f'127.0.0.1:{port}')}; echo; {raw_connect(f'localhost:{port}')}; echo; "
        f"exec 4<>/dev/tcp/127.0.0.1/{port} && head -c 64 <&4 || echo direct-refused",
    )
    assert "host-service-banner" not in result.text, result.text
    assert "refused: 127.0.0.1 is a loopback address" in result.text
    assert result.text.count("HTTP/1.1 403 ") >= 2 and "direct-refused" in result.text
    assert listener.accepted == before


def test_a_unix_socket_of_the_host_is_unreachable(
    tmp_path: Path, unix_listener: tuple[CountingListener, Path]
) -> None:
    listener, path = unix_listener
    result = bash(
        tmp_path,
        f"{raw_connect(str(path))}; echo; {raw_connect(f'unix:{path}')}; echo; "
        f"test -e {path} && echo visible || echo absent",
    )
    assert result.text.count("HTTP/1.1 403 ") == 2, result.text
    assert result.text.count("not a host:port destination") == 2
    assert "absent" in result.text and "host-service-banner" not in result.text
    assert listener.accepted == 0


def test_traffic_that_ignores_the_proxy_has_no_route(tmp_path: Path) -> None:
    result = bash(
        tmp_path,
        "exec 3<>/dev/tcp/8.8.8.8/53 && echo reached || echo no-route; "
        "exec 3<>/dev/tcp/192.0.2.1/80 && echo reached || echo no-route",
    )
    assert result.text.count("no-route") == 2 and "reached" not in result.text, result.text


def test_bytes_flow_through_the_relay_and_the_proxy_end_to_end(
    tmp_path: Path, server: RecordingHTTPServer, admitting_proxy: EgressProxy
) -> None:
    base = f"http://127.0.0.1:{server.port}"
    result = bash(tmp_path, f"{get(base + '/forwarded')}; {get(base + '/tunnelled', tunnel=True)}")
    assert "hello /forwarded" in result.text and "hello /tunnelled" in result.text, result.text
    assert [path for path, _ in server.requests] == ["/forwarded", "/tunnelled"]


def test_the_exit_status_is_the_shells_with_the_relay_running(
    tmp_path: Path, admitting_proxy: EgressProxy
) -> None:
    assert bash(tmp_path, "exit 3").text.endswith("[exit code 3]")


def test_the_default_has_no_proxy_no_socket_and_starts_no_proxy(
    tmp_path: Path, tcp_listener: tuple[CountingListener, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    listener, port = tcp_listener
    monkeypatch.setattr(egress, "_shared", None)
    result = bash(
        tmp_path,
        'echo "proxy=[${HTTP_PROXY:-}${HTTPS_PROXY:-}${ALL_PROXY:-}]"; '
        "test -e /run/specwire && echo socket-present || echo no-socket; "
        f"exec 3<>/dev/tcp/127.0.0.1/{port} && head -c 64 <&3 || echo refused; "
        "exec 3<>/dev/tcp/8.8.8.8/53 && echo reached || echo no-route",
        BashSettings(),
    )
    assert "proxy=[]" in result.text and "no-socket" in result.text, result.text
    assert "refused" in result.text and "no-route" in result.text
    assert "host-service-banner" not in result.text and listener.accepted == 0
    assert egress._shared is None
