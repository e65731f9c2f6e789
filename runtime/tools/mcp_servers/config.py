"""A bundle's ``MCP_SERVERS`` literal read into typed server settings.

The compiler emits ``{name: {"transport": "stdio", "command", "args", "env", "optional",
"sandbox"?, "network"?}`` (``"sandbox": False`` only for a server the spec runs unconfined,
``"network": "outbound"`` only for one that reaches public hosts) or
``{"transport": "http", "url", "headers", "optional"}}``; a value of ``env`` or ``headers`` is a
literal or a ``SecretRef`` (resolved here, at start, and registered for redaction).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from specwire.runtime.safety.secrets import SecretRef

# A tool's name as the model sees it: ``mcp__<server>__<tool>``.
MCP_TOOL_PREFIX = "mcp__"
MCP_TOOL_SEPARATOR = "__"


@dataclass(frozen=True)
class StdioServer:
    name: str
    command: str
    args: tuple[str, ...]
    env: tuple[tuple[str, str | SecretRef], ...]
    optional: bool
    # False only where the spec says ``sandbox: false``: the server runs unconfined.
    sandbox: bool = True
    # "outbound": the confined server reaches public hosts through bash's egress proxy.
    network: Literal["none", "outbound"] = "none"


@dataclass(frozen=True)
class HttpServer:
    name: str
    url: str
    headers: tuple[tuple[str, str | SecretRef], ...]
    optional: bool


McpServer = StdioServer | HttpServer


def servers_from_bundle(literal: Mapping[str, Mapping[str, Any]]) -> list[McpServer]:
    """The servers of a bundle's literal, in name order."""
    servers: list[McpServer] = []
    for name in sorted(literal):
        entry = literal[name]
        optional = bool(entry.get("optional", False))
        if entry["transport"] == "stdio":
            servers.append(
                StdioServer(
                    name,
                    str(entry["command"]),
                    tuple(str(arg) for arg in entry.get("args", ())),
                    _pairs(entry.get("env", {})),
                    optional,
                    sandbox=entry.get("sandbox", True) is not False,
                    network="outbound" if entry.get("network") == "outbound" else "none",
                )
            )
        else:
            servers.append(
                HttpServer(name, str(entry["url"]), _pairs(entry.get("headers", {})), optional)
            )
    return servers


def _pairs(values: Mapping[str, Any]) -> tuple[tuple[str, str | SecretRef], ...]:
    return tuple(
        (str(key), value if isinstance(value, SecretRef) else str(value))
        for key, value in sorted(values.items())
    )


def resolved(pairs: tuple[tuple[str, str | SecretRef], ...]) -> dict[str, str]:
    """The pairs with every secret reference read from the environment (``MissingSecretError``
    when one is not set)."""
    return {key: value.resolve() if isinstance(value, SecretRef) else value for key, value in pairs}
