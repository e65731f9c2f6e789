"""Every ``mcp_servers`` entry started at a bundle's start, its tools put in the catalog.

A server that is not ``optional`` and does not start, answer and list its tools within
``START_DEADLINE_SECONDS`` stops the start (``McpServerError``: ``run_bundle`` prints it as one
line and exits 2); an optional one is one warning line and its tools are left out. A tool whose
name a model API would refuse, that collides with another, whose description the injection
scanner flags (it is shown to the model) or whose schema is not valid JSON Schema is left out
with a warning line too.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from specwire.runtime.core.tool_types import Catalog
from specwire.runtime.tools.mcp_servers.config import StdioServer, servers_from_bundle
from specwire.runtime.tools.mcp_servers.errors import McpServerError

START_DEADLINE_SECONDS = 10.0


def connect_mcp_servers(
    literal: Mapping[str, Mapping[str, Any]],
    catalog: Catalog,
    workspace: Path,
    warn: Callable[[str], None],
    *,
    deadline: float = START_DEADLINE_SECONDS,
) -> Callable[[], None]:
    """Start the servers, register their tools, and return what stops them."""
    from specwire.runtime.tools.mcp_servers.connection import McpConnections, ServerSession
    from specwire.runtime.tools.mcp_servers.tools import (
        TOOL_NAME_RE,
        description_problem,
        mcp_tool,
        schema_problem,
    )

    connections = McpConnections()
    try:
        servers = servers_from_bundle(literal)
        outcomes = connections.start_all(servers, workspace, deadline)
        for server, started in zip(servers, outcomes, strict=True):
            if isinstance(started, McpServerError):
                if not server.optional:
                    raise started
                warn(f"{started} (optional: its tools are left out)")
                continue
            for listed in started.tools:
                problem = (
                    (
                        None
                        if TOOL_NAME_RE.fullmatch(f"mcp__{server.name}__{listed.name}")
                        else "its name is not one a model API accepts"
                    )
                    or description_problem(listed)
                    or schema_problem(dict(listed.input_schema))
                )
                if problem is not None:
                    warn(f"MCP server {server.name!r}: tool {listed.name!r} left out: {problem}")
                    continue

                def call(
                    tool: str,
                    arguments: dict[str, Any],
                    timeout: float,
                    session: ServerSession = started,
                ) -> Any:
                    return connections.call(session, tool, arguments, timeout)

                try:
                    catalog.register(
                        mcp_tool(
                            server.name,
                            listed,
                            call,
                            workspace if isinstance(server, StdioServer) else None,
                        )
                    )
                except ValueError:
                    warn(f"MCP server {server.name!r}: tool {listed.name!r} left out: name taken")
    except BaseException:
        connections.close()
        raise
    return connections.close
