"""The ``cli`` target: a terminal agent; memory wired once at boot, spec scope; the spec's MCP
tool servers (``mcp_servers``) started at boot too."""

from __future__ import annotations

from specwire.emitters.bundle import Bundle
from specwire.emitters.common import agent_context, emit_plan
from specwire.emitters.tool_servers import server_literals, server_secrets, server_strings
from specwire.ir.model import IrCli


def emit(spec: IrCli) -> Bundle:
    return emit_plan(
        spec=spec,
        context={
            **agent_context(spec.agent, spec.tools),
            "mcp_servers": server_literals(spec.mcp_servers),
        },
        model=spec.agent.model,
        secrets=server_secrets(spec.mcp_servers),
        user_strings=server_strings(spec.mcp_servers),
    )
