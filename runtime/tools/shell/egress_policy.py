"""Where the sandbox's outbound traffic may go: public TCP hosts, never this machine or its LAN.

The egress proxy (``egress.py``) asks ``resolve_destination`` for every tunnel: it parses
``host:port``, resolves the name itself and checks every address the name resolves to; a name
with one refused address is refused whole (a split answer is how DNS rebinding starts). The
proxy then connects to the very address it checked, so no second lookup can swap it.

Refused: loopback, private (RFC 1918, CGNAT, IPv6 ULA), link-local, multicast, unspecified,
reserved and documentation ranges (anything the standard library does not call global), the
IPv4 forms embedded in IPv6 (mapped, compatible, 6to4, NAT64) when the embedded address is
refused, and every address this machine holds (its own interfaces reach its own services).
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Callable, Sequence
from dataclasses import dataclass

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
# getaddrinfo(host, port, family, type, proto) -> [(family, type, proto, canonname, sockaddr)]
Resolver = Callable[..., Sequence[tuple[int, int, int, str, tuple[object, ...]]]]
AddressCheck = Callable[[IPAddress], str | None]

_HOST_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-.")
_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")
_IPV4_COMPATIBLE = ipaddress.IPv6Network("::/96")


class EgressRefused(Exception):
    """A destination the sandbox may not reach; the message says why, in one line."""


class EgressUnresolved(Exception):
    """A name that does not resolve (or not in time)."""


@dataclass(frozen=True)
class Destination:
    host: str
    port: int


@dataclass(frozen=True)
class Resolved:
    family: int
    sockaddr: tuple[object, ...]
    address: IPAddress


def parse_authority(authority: str) -> Destination:
    """``host:port`` (``[v6]:port`` for IPv6 literals), nothing else: no user, path or scheme."""
    if not authority or len(authority) > 261 or any(c in authority for c in "@/\\?#% \t"):
        raise EgressRefused(f"not a host:port destination: {authority[:80]!r}")
    if authority.startswith("["):
        host, sep, rest = authority[1:].partition("]")
        if not sep or not rest.startswith(":"):
            raise EgressRefused(f"not a host:port destination: {authority[:80]!r}")
        port_text = rest[1:]
        try:
            ipaddress.IPv6Address(host)
        except ValueError as exc:
            raise EgressRefused(f"not an IPv6 address: {host[:80]!r}") from exc
    else:
        host, sep, port_text = authority.rpartition(":")
        if not sep or not host or not set(host) <= _HOST_CHARS:
            raise EgressRefused(f"not a host:port destination: {authority[:80]!r}")
    if not port_text.isascii() or not port_text.isdigit() or not 1 <= int(port_text) <= 65535:
        raise EgressRefused(f"not a TCP port: {port_text[:10]!r}")
    return Destination(host.lower().rstrip(".") or host, int(port_text))


def _embedded_ipv4(address: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address.sixtofour is not None:
        return address.sixtofour
    if address in _NAT64 or address in _IPV4_COMPATIBLE:
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    return None


def address_refusal(address: IPAddress) -> str | None:
    """Why ``address`` is not a public unicast address (None when it is)."""
    if address.is_unspecified:
        return f"{address} is the unspecified address"
    if address.is_loopback:
        return f"{address} is a loopback address"
    if isinstance(address, ipaddress.IPv6Address):
        if address.scope_id:
            return f"{address} is scoped to a local interface"
        embedded = _embedded_ipv4(address)
        if embedded is not None:
            reason = address_refusal(embedded)
            return None if reason is None else f"{address} embeds {reason}"
        if address.is_site_local:
            return f"{address} is a site-local address"
    for label, flag in (
        ("a link-local address", address.is_link_local),
        ("a multicast address", address.is_multicast),
        ("a private address", address.is_private),
    ):
        if flag:
            return f"{address} is {label}"
    if isinstance(address, ipaddress.IPv4Address) and address in ipaddress.IPv4Network(
        "100.64.0.0/10"
    ):
        return f"{address} is a shared (CGNAT) address"
    if not address.is_global:
        return f"{address} is not a public address"
    return None


def host_address_refusal(address: IPAddress) -> str | None:
    """Why ``address`` belongs to this machine, by asking the kernel: an address one can bind
    is local. Fails closed: any answer but "cannot assign" counts as local."""
    family = socket.AF_INET6 if address.version == 6 else socket.AF_INET
    probe = socket.socket(family, socket.SOCK_DGRAM)
    try:
        probe.bind((str(address), 0))
    except OSError as exc:
        if exc.errno == 99:  # EADDRNOTAVAIL: not an address of this machine
            return None
        return f"{address} cannot be checked against this machine's addresses ({exc.strerror})"
    finally:
        probe.close()
    return f"{address} is an address of this machine"


def public_address_refusal(address: IPAddress) -> str | None:
    """The proxy's check: a public address that is not this machine's own."""
    return address_refusal(address) or host_address_refusal(address)


def resolve_destination(
    destination: Destination,
    *,
    resolver: Resolver = socket.getaddrinfo,
    check: AddressCheck = public_address_refusal,
) -> list[Resolved]:
    """Every address ``destination`` resolves to, each checked; refused if any one is refused."""
    try:
        answers = resolver(
            destination.host,
            destination.port,
            socket.AF_UNSPEC,
            socket.SOCK_STREAM,
            socket.IPPROTO_TCP,
        )
    except (OSError, UnicodeError) as exc:
        raise EgressUnresolved(f"cannot resolve {destination.host}: {exc}") from exc
    resolved: list[Resolved] = []
    for family, _type, _proto, _name, sockaddr in answers:
        if family not in (socket.AF_INET, socket.AF_INET6):
            raise EgressRefused(f"{destination.host} resolves to a non-IP address")
        try:
            address: IPAddress = ipaddress.ip_address(str(sockaddr[0]))
        except ValueError as exc:
            raise EgressRefused(f"{destination.host} resolves to {sockaddr[0]!r}") from exc
        if isinstance(address, ipaddress.IPv6Address) and len(sockaddr) >= 4 and sockaddr[3]:
            raise EgressRefused(f"{destination.host}: {address} is scoped to a local interface")
        reason = check(address)
        if reason is not None:
            raise EgressRefused(f"{destination.host}:{destination.port} refused: {reason}")
        resolved.append(Resolved(family, sockaddr, address))
    if not resolved:
        raise EgressRefused(f"{destination.host} resolves to no address")
    return resolved
