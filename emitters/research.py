"""The ``research`` target: a batch run; memory wired once at boot, shared by every branch; the
spec's MCP tool servers (``mcp_servers``) started once at the start, offered to every branch."""

from __future__ import annotations

from specwire.emitters.bundle import Bundle
from specwire.emitters.common import agent_context, emit_plan
from specwire.emitters.tool_servers import server_literals, server_secrets, server_strings
from specwire.ir.model import IrResearch


def emit(spec: IrResearch) -> Bundle:
    origins = spec.retrieve.allowed_origins if spec.retrieve is not None else ()
    context = {
        **agent_context(spec.agent, spec.tools),
        "goal": spec.goal,
        "branching_factor": spec.branching_factor,
        "max_duration_ms": spec.max_duration_ms,
        "allowed_origins": tuple(origins),
        "mcp_servers": server_literals(spec.mcp_servers),
    }
    return emit_plan(
        spec=spec,
        context=context,
        model=spec.agent.model,
        secrets=server_secrets(spec.mcp_servers),
        user_strings=server_strings(spec.mcp_servers),
    )
