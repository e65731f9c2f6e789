"""A spec's MCP tool servers (``mcp_servers``, with ``thredz``'s) as the templates render them:
the ``MCP_SERVERS`` literal, the secrets the README lists and the user's strings the bundle
checks carry. Shared by the targets that run tool servers (all five)."""

from __future__ import annotations

from typing import Any

from specwire.emitters.common import EnvVar
from specwire.emitters.literals import md_code
from specwire.ir.model import IrMcpServer, SecretRef


def server_literals(servers: tuple[IrMcpServer, ...]) -> list[dict[str, Any]]:
    return [
        {
            "name": server.name,
            "transport": server.transport,
            "command": server.command,
            "args": list(server.args),
            "url": server.url,
            "optional": server.optional,
            "sandbox": server.sandbox,
            "network": server.network,
            "settings": [
                {
                    "key": key,
                    "secret": isinstance(value, SecretRef),
                    "value": value.env if isinstance(value, SecretRef) else value,
                }
                for key, value in _settings(server)
            ],
        }
        for server in servers
    ]


def _settings(server: IrMcpServer) -> tuple[tuple[str, Any], ...]:
    return server.env if server.transport == "stdio" else server.headers


def server_secrets(servers: tuple[IrMcpServer, ...]) -> list[EnvVar]:
    return [
        EnvVar(
            value.env,
            f"secret: {md_code(key)} of MCP server {md_code(server.name)}"
            + (" (optional server)" if server.optional else ""),
        )
        for server in servers
        for key, value in _settings(server)
        if isinstance(value, SecretRef)
    ]


def server_strings(servers: tuple[IrMcpServer, ...]) -> tuple[str, ...]:
    return tuple(
        text
        for server in servers
        for text in (
            server.name,
            server.command or "",
            server.url or "",
            *server.args,
            *(key for key, _ in _settings(server)),
            *(value for _, value in _settings(server) if isinstance(value, str)),
        )
        if text
    )
