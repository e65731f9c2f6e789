"""The egress proxy's destination checks: which addresses and names the sandbox may reach.

The resolver is injected where a test needs a name to resolve somewhere specific (this machine
cannot serve DNS for ``rebind.example``); the address checks and the host-address probe are the
real ones.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Sequence

import pytest

from specwire.runtime.tools.shell.egress_policy import (
    Destination,
    EgressRefused,
    EgressUnresolved,
    address_refusal,
    host_address_refusal,
    parse_authority,
    public_address_refusal,
    resolve_destination,
)

REFUSED = [
    "127.0.0.1",
    "127.8.9.10",
    "0.0.0.0",
    "10.1.2.3",
    "172.16.0.1",
    "172.31.255.254",
    "192.168.1.1",
    "100.64.0.1",  # CGNAT
    "100.127.255.254",
    "169.254.169.254",  # cloud metadata (link-local)
    "224.0.0.1",
    "239.255.255.250",
    "255.255.255.255",
    "192.0.2.2",  # documentation
    "198.18.0.1",  # benchmarking
    "240.0.0.1",  # reserved
    "::",
    "::1",
    "fd00::2",  # ULA
    "fc00::1",
    "fe80::1",
    "fec0::1",  # site-local
    "ff02::1",
    "ff0e::1",
    "::ffff:127.0.0.1",  # IPv4-mapped
    "::ffff:10.0.0.1",
    "::ffff:169.254.169.254",
    "::127.0.0.1",  # IPv4-compatible
    "64:ff9b::7f00:1",  # NAT64 of 127.0.0.1
    "64:ff9b::a00:1",  # NAT64 of 10.0.0.1
    "2002:7f00:1::1",  # 6to4 of 127.0.0.1
    "2002:c0a8:101::1",  # 6to4 of 192.168.1.1
    "2001:db8::1",  # documentation
]
ALLOWED = [
    "8.8.8.8",
    "1.1.1.1",
    "93.184.215.14",
    "2606:4700:4700::1111",
    "2a00:1450:4001::200e",
    "::ffff:8.8.8.8",
    "64:ff9b::808:808",  # NAT64 of 8.8.8.8
]


@pytest.mark.parametrize("text", REFUSED)
def test_non_public_addresses_are_refused(text: str) -> None:
    reason = address_refusal(ipaddress.ip_address(text))
    assert reason is not None and "\n" not in reason


@pytest.mark.parametrize("text", ALLOWED)
def test_public_unicast_addresses_pass_the_range_check(text: str) -> None:
    assert address_refusal(ipaddress.ip_address(text)) is None


def test_a_scoped_ipv6_address_is_refused() -> None:
    assert address_refusal(ipaddress.IPv6Address("2606:4700::1%2")) is not None


def test_this_machines_own_addresses_are_refused_by_asking_the_kernel() -> None:
    assert host_address_refusal(ipaddress.ip_address("127.0.0.1")) is not None
    assert host_address_refusal(ipaddress.ip_address("8.8.8.8")) is None
    # The address this machine would send from (a non-loopback one, when it has a route).
    probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        probe.connect(("8.8.8.8", 53))
        own = probe.getsockname()[0]
    except OSError:
        pytest.skip("no IPv4 route here to learn a non-loopback address of this machine")
    finally:
        probe.close()
    assert host_address_refusal(ipaddress.ip_address(own)) is not None
    assert public_address_refusal(ipaddress.ip_address(own)) is not None


@pytest.mark.parametrize(
    ("authority", "expected"),
    [
        ("example.com:443", Destination("example.com", 443)),
        ("Example.COM.:80", Destination("example.com", 80)),
        ("8.8.8.8:53", Destination("8.8.8.8", 53)),
        ("[2606:4700::1]:443", Destination("2606:4700::1", 443)),
    ],
)
def test_host_port_destinations_parse(authority: str, expected: Destination) -> None:
    assert parse_authority(authority) == expected


@pytest.mark.parametrize(
    "authority",
    [
        "",
        "example.com",
        "example.com:0",
        "example.com:65536",
        "example.com:https",
        "example.com:+443",
        "example.com:４４３",
        "user@example.com:443",
        "/run/postgresql/.s.PGSQL.5432",
        "unix:/tmp/service.sock",
        "/tmp/specwire-seal/service.sock:1",
        "example.com/path:443",
        "[::1:443",
        "[not-v6]:443",
        "exa mple.com:443",
        "%31%32%37.0.0.1:80",
        "ex\u0430mple.com:443",  # a Cyrillic a
    ],
)
def test_anything_but_a_tcp_host_port_is_refused(authority: str) -> None:
    with pytest.raises(EgressRefused):
        parse_authority(authority)


def resolver_for(answers: dict[str, list[str]], calls: list[str] | None = None) -> object:
    def resolve(
        host: str, port: int, *_: object
    ) -> Sequence[tuple[int, int, int, str, tuple[object, ...]]]:
        if calls is not None:
            calls.append(host)
        if host not in answers:
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        out: list[tuple[int, int, int, str, tuple[object, ...]]] = []
        for text in answers[host]:
            if ":" in text:
                out.append((socket.AF_INET6, socket.SOCK_STREAM, 6, "", (text, port, 0, 0)))
            else:
                out.append((socket.AF_INET, socket.SOCK_STREAM, 6, "", (text, port)))
        return out

    return resolve


def test_a_name_that_resolves_to_loopback_is_refused() -> None:
    resolve = resolver_for({"127.0.0.1.nip.io": ["127.0.0.1"], "rebind.example": ["::1"]})
    for host in ("127.0.0.1.nip.io", "rebind.example"):
        with pytest.raises(EgressRefused, match="loopback"):
            resolve_destination(Destination(host, 80), resolver=resolve)  # type: ignore[arg-type]


def test_a_split_answer_is_refused_whole() -> None:
    resolve = resolver_for({"split.example": ["8.8.8.8", "10.0.0.5"]})
    with pytest.raises(EgressRefused, match="10.0.0.5"):
        resolve_destination(Destination("split.example", 443), resolver=resolve)  # type: ignore[arg-type]


def test_a_public_name_resolves_to_the_checked_addresses_once() -> None:
    calls: list[str] = []
    resolve = resolver_for({"public.example": ["8.8.8.8", "2606:4700::1"]}, calls)
    resolved = resolve_destination(Destination("public.example", 443), resolver=resolve)  # type: ignore[arg-type]
    assert [str(r.address) for r in resolved] == ["8.8.8.8", "2606:4700::1"]
    assert [r.sockaddr[0] for r in resolved] == ["8.8.8.8", "2606:4700::1"]
    assert calls == ["public.example"]  # one lookup: the proxy connects to these sockaddrs


def test_a_scoped_answer_and_a_non_ip_family_are_refused() -> None:
    def scoped(*_: object) -> list[tuple[int, int, int, str, tuple[object, ...]]]:
        return [(socket.AF_INET6, socket.SOCK_STREAM, 6, "", ("2606:4700::1", 80, 0, 3))]

    def unix(*_: object) -> list[tuple[int, int, int, str, tuple[object, ...]]]:
        return [(socket.AF_UNIX, socket.SOCK_STREAM, 0, "", ("/tmp/x.sock",))]

    for resolve in (scoped, unix):
        with pytest.raises(EgressRefused):
            resolve_destination(Destination("odd.example", 80), resolver=resolve)


def test_an_unknown_name_is_unresolved_not_a_crash() -> None:
    with pytest.raises(EgressUnresolved, match="nowhere.example"):
        resolve_destination(Destination("nowhere.example", 80), resolver=resolver_for({}))  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "host", ["localhost", "127.1", "2130706433", "0x7f000001", "0177.0.0.1", "0", "::ffff:7f00:1"]
)
def test_other_spellings_of_this_machine_resolve_and_are_refused(host: str) -> None:
    # The real resolver: the check applies to what the name resolves to, not how it is written.
    with pytest.raises(EgressRefused):
        resolve_destination(Destination(host, 80))
