"""``thredz:`` lowered: the fragment's ``thredz`` block and the synthesized MCP server.

The server entry is CrewHaus's: ``npx -y thredz-mcp@0.2.0`` with ``THREDZ_API_KEY`` (the key's
secret reference), ``THREDZ_API_BASE`` (only with ``base_url``) and
``THREDZ_DEFAULT_VISIBILITY``. A spec that declares ``mcp_servers.thredz`` itself keeps its own
(a self-hosted or stand-in server). Without a ``memory:`` block, memory is on with defaults: the
local stores are where the agent's memory goes while Thredz is unreachable.
"""

from __future__ import annotations

from specwire.ir.model import IrContinuity, IrMcpServer, IrMemory, IrThredz, SecretRef
from specwire.ir.source import ThredzSource
from specwire.ir.thredz_source import (
    THREDZ_PACKAGE,
    THREDZ_SERVER,
    agent_handle,
)


def lower_thredz(thredz: ThredzSource, spec_name: str, continuity: IrContinuity | None) -> IrThredz:
    """Goals are mirrored only from a spec-wide goal list: a channel's continuity is per
    conversation by default (a managed service's per person), and one conversation's goals
    mirrored to the one Thredz space would reach every other (``goals: true`` there needs
    ``continuity.scope: spec``: ``thredz_checks``)."""
    spec_wide = continuity is not None and continuity.scope == "spec"
    goals = thredz.goals if thredz.goals is not None else bool(continuity and continuity.plan)
    goals = goals and spec_wide
    return IrThredz(
        server=THREDZ_SERVER,
        visibility=thredz.visibility or "private",
        goals=goals,
        agent_name=agent_handle(thredz.agents, spec_name),
    )


def thredz_server(thredz: ThredzSource) -> IrMcpServer:
    env: list[tuple[str, SecretRef | str]] = [
        ("THREDZ_API_KEY", SecretRef(env=thredz.api_key.removeprefix("$"))),
        ("THREDZ_DEFAULT_VISIBILITY", thredz.visibility or "private"),
    ]
    if thredz.base_url is not None:
        env.append(("THREDZ_API_BASE", thredz.base_url))
    return IrMcpServer(
        name=THREDZ_SERVER,
        transport="stdio",
        command="npx",
        args=("-y", THREDZ_PACKAGE),
        env=tuple(sorted(env)),
        # In the bash sandbox like any stdio server; npx downloads the package and the server
        # calls the Thredz API, both public hosts.
        network="outbound",
    )


def with_thredz_server(
    servers: tuple[IrMcpServer, ...], thredz: ThredzSource | None
) -> tuple[IrMcpServer, ...]:
    """The spec's servers, plus Thredz's unless the spec declares a server of that name."""
    if thredz is None or any(server.name == THREDZ_SERVER for server in servers):
        return servers
    return tuple(sorted((*servers, thredz_server(thredz)), key=lambda server: server.name))


def thredz_memory(memory: IrMemory | None, declared: bool) -> IrMemory | None:
    """Memory on with defaults when the spec gave no ``memory:`` block."""
    return IrMemory() if memory is None and not declared else memory
