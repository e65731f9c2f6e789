"""The ``cli`` target: a terminal agent; memory wired once at boot, spec scope; the spec's MCP
tool servers (``mcp_servers``) started at boot too."""

from __future__ import annotations

from typing import Any

from specwire.emitters.bundle import Bundle
from specwire.emitters.common import EnvVar, agent_context, emit_plan
from specwire.emitters.literals import md_code
from specwire.ir.model import IrCli, IrMcpServer, SecretRef


def _mcp_servers(spec: IrCli) -> list[dict[str, Any]]:
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
        for server in spec.mcp_servers
    ]


def _settings(server: IrMcpServer) -> tuple[tuple[str, Any], ...]:
    return server.env if server.transport == "stdio" else server.headers


def _secrets(spec: IrCli) -> list[EnvVar]:
    return [
        EnvVar(
            value.env,
            f"secret: {md_code(key)} of MCP server {md_code(server.name)}"
            + (" (optional server)" if server.optional else ""),
        )
        for server in spec.mcp_servers
        for key, value in _settings(server)
        if isinstance(value, SecretRef)
    ]


def emit(spec: IrCli) -> Bundle:
    servers = _mcp_servers(spec)
    return emit_plan(
        spec=spec,
        context={**agent_context(spec.agent, spec.tools), "mcp_servers": servers},
        model=spec.agent.model,
        secrets=_secrets(spec),
        user_strings=tuple(
            text
            for server in spec.mcp_servers
            for text in (
                server.name,
                server.command or "",
                server.url or "",
                *server.args,
                *(key for key, _ in _settings(server)),
                *(value for _, value in _settings(server) if isinstance(value, str)),
            )
            if text
        ),
    )
