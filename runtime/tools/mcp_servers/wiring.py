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
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from specwire.runtime.core.tool_types import Catalog
from specwire.runtime.tools.mcp_servers.config import StdioServer, servers_from_bundle
from specwire.runtime.tools.mcp_servers.errors import McpServerError

START_DEADLINE_SECONDS = 10.0
# The bridged (Thredz) server's start: ``npx -y`` fetches its package on a first start, and a
# Thredz that does not start only degrades the run, so it is given longer.
BRIDGED_START_DEADLINE_SECONDS = 30.0


@dataclass(frozen=True)
class BridgedServer:
    """A started server whose tools are not offered as ``mcp__…`` but used by the runtime
    (``thredz``): its call and the names of the tools it listed."""

    call: Callable[[str, dict[str, Any], float], Any]
    tools: frozenset[str]


def connect_mcp_servers(
    literal: Mapping[str, Mapping[str, Any]],
    catalog: Catalog,
    workspace: Path,
    warn: Callable[[str], None],
    *,
    deadline: float = START_DEADLINE_SECONDS,
) -> Callable[[], None]:
    """Start the servers, register their tools, and return what stops them."""
    stop, _ = connect_with_bridge(literal, catalog, workspace, warn, deadline=deadline)
    return stop


def connect_with_bridge(
    literal: Mapping[str, Mapping[str, Any]],
    catalog: Catalog,
    workspace: Path,
    warn: Callable[[str], None],
    *,
    bridged: str | None = None,
    deadline: float = START_DEADLINE_SECONDS,
) -> tuple[Callable[[], None], BridgedServer | McpServerError | None]:
    """``connect_mcp_servers``, with the server named ``bridged`` (if any) kept apart: its
    tools are not registered, and when it does not start the start goes on without it (its
    ``McpServerError`` is returned; the caller says what that means)."""
    from specwire.runtime.tools.mcp_servers.connection import McpConnections, ServerSession
    from specwire.runtime.tools.mcp_servers.tools import (
        TOOL_NAME_RE,
        description_problem,
        mcp_tool,
        schema_problem,
    )

    connections = McpConnections()
    kept: BridgedServer | McpServerError | None = None
    try:
        servers = servers_from_bundle(literal)
        longer = {bridged: max(deadline, BRIDGED_START_DEADLINE_SECONDS)} if bridged else None
        outcomes = connections.start_all(servers, workspace, deadline, longer)
        for server, started in zip(servers, outcomes, strict=True):
            if server.name == bridged:
                kept = (
                    started
                    if isinstance(started, McpServerError)
                    else _bridged(connections, started)
                )
                continue
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
    return connections.close, kept


def _bridged(connections: Any, started: Any) -> BridgedServer:
    def call(tool: str, arguments: dict[str, Any], timeout: float) -> Any:
        return connections.call(started, tool, arguments, timeout)

    return BridgedServer(call, frozenset(str(listed.name) for listed in started.tools))
