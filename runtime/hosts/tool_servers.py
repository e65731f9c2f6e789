"""A spec's MCP tool servers (``mcp_servers``, and ``thredz``'s) on the per-turn hosts, and on
the crew and research hosts (one instance for the run, key ``""``, as channel).

The servers start once, when the host starts (after the start checks, before the banner), and
every turn gets their tools as ``mcp__<server>__<tool>``, exactly as on cli
(``runtime.tools.mcp_servers.wiring``): a server that is not ``optional`` and does not start
stops the start with one line (exit 2), an optional one is one warning line. Stopping the host
stops them.

Where they run, per target:

- channel: one instance of each server for the process, its working folder the bot's working
  folder (where ``bash`` runs too), shared by every conversation;
- managed: one instance of each server per tenant, its working folder that tenant's workspace
  (a stdio server confined there, in the bash sandbox), so what a server reads or writes for
  one tenant is out of every other tenant's reach. A server is never shared between tenants.
  (The compiler refuses ``sandbox: false`` on a managed spec with several tenants: unconfined,
  a server could read any tenant's root.)

With ``thredz`` its server is kept apart: the memory tools are bridged to it
(``runtime.tools.mcp_servers.thredz``), one link per instance (a tenant's Thredz failing
degrades that tenant's memory, with the one logged line). Facts stay local on these hosts
(``memory.scope`` makes them a person's; Thredz has one visibility per account); the wiki and
spec-wide goals go to Thredz. A spec that learns into Thredz's wiki (``thredz`` and no
``memory.wiki``) gets the learning loop's tools over it (``runtime.learning.thredz_home``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from specwire.runtime.core.fragment import learning_on_thredz
from specwire.runtime.core.fragment_data import FragmentData
from specwire.runtime.core.tool_types import Tool, ToolCatalog
from specwire.runtime.hosts.types import TurnSetup

if TYPE_CHECKING:
    from specwire.runtime.tools.mcp_servers.thredz import ThredzLink


@dataclass
class _Instance:
    """The servers started for one workspace: their tools, the Thredz link, what stops them."""

    tools: tuple[Tool, ...]
    stop: Callable[[], None]
    link: ThredzLink | None = None


@dataclass
class HostToolServers:
    """The spec's servers for a per-turn host, by instance key ("" for channel, the tenant id
    for managed)."""

    literal: Mapping[str, Mapping[str, Any]]
    thredz: Mapping[str, Any] | None
    log: Callable[[str], None]
    # Whether the fact tools and fact recall go to Thredz: only when facts are not scoped to
    # people (no ``memory.scope`` in the fragment).
    forward_facts: bool = False
    # The bundle's fragment, parsed (learning into Thredz's wiki reads its ``learning``).
    fragment: FragmentData | None = None
    _workspaces: dict[str, Path] = field(default_factory=dict)
    _announced: set[str] = field(default_factory=set)
    _instances: dict[str, _Instance] = field(default_factory=dict)

    def start(self, key: str, workspace: Path) -> None:
        """Start every server for ``key``, working in ``workspace``; a server that must start
        and does not raises ``McpServerError`` (whatever this object started is stopped)."""
        from specwire.runtime.tools.mcp_servers.wiring import BridgedServer, connect_with_bridge

        bridged_name = self.thredz["server"] if self.thredz is not None else None
        collected = ToolCatalog()
        try:
            stop, bridged = connect_with_bridge(
                self.literal,
                collected,
                workspace,
                lambda line: self.log(f"{line}\n"),
                bridged=bridged_name,
            )
        except BaseException:
            self.close()
            raise
        link = None
        if bridged_name is not None:
            from specwire.runtime.tools.mcp_servers.thredz import ThredzLink

            reached = bridged if isinstance(bridged, BridgedServer) else None
            link = ThredzLink(
                bridged_name,
                reached.call if reached is not None else None,
                reached.tools if reached is not None else frozenset(),
                self.log,
                why=str(bridged) if bridged is not None and reached is None else None,
            )
        self._instances[key] = _Instance(tuple(collected), stop, link)
        self._workspaces[key] = workspace

    def extend(self, setup: TurnSetup, key: str) -> TurnSetup:
        """``setup`` with the servers' tools added to its catalog and, with ``thredz``, its
        memory tools bridged to Thredz."""
        instance = self._instances.get(key)
        if instance is None:
            return setup
        for tool in instance.tools:
            setup.catalog.register(tool)
        if instance.link is None or self.thredz is None:
            return setup
        from specwire.runtime.tools.mcp_servers.thredz import bridge_memory

        catalog, options = bridge_memory(
            setup.catalog,
            setup.options,
            instance.link,
            goals=bool(self.thredz.get("goals")),
            facts=self.forward_facts,
        )
        if self.fragment is not None and learning_on_thredz(self.fragment):
            from specwire.runtime.learning.thredz_home import with_thredz_learning

            first = key not in self._announced  # said once per instance, not every turn
            self._announced.add(key)
            catalog = with_thredz_learning(
                catalog,
                self.fragment,
                instance.link,
                self._workspaces[key],
                self.log if first else (lambda _line: None),
            )
        return TurnSetup(catalog=catalog, options=options, close=setup.close)

    def study_pass(self, key: str) -> Callable[[], str] | None:
        """A study pass into Thredz's wiki over ``key``'s instance, as its summary (a
        heartbeat's tick); None when the spec does not learn into Thredz's wiki."""
        instance = self._instances.get(key)
        fragment = self.fragment
        if instance is None or instance.link is None or fragment is None:
            return None
        if not learning_on_thredz(fragment):
            return None
        from specwire.runtime.learning.thredz_home import thredz_learning_context
        from specwire.runtime.learning.wiring import study_pass_summary

        context = thredz_learning_context(fragment, instance.link, self._workspaces[key])
        return lambda: study_pass_summary(context)

    def close(self) -> None:
        """Stop every server started (each instance once)."""
        while self._instances:
            _, instance = self._instances.popitem()
            instance.stop()


def host_tool_servers(
    literal: Mapping[str, Mapping[str, Any]] | None,
    fragment: Mapping[str, Any] | None,
    log: Callable[[str], None],
) -> HostToolServers | None:
    """The servers of a bundle's ``MCP_SERVERS`` (None when it names none), not yet started."""
    if not literal:
        return None
    memory = fragment.get("memory") if fragment is not None else None
    scoped = isinstance(memory, Mapping) and memory.get("scope") is not None
    from specwire.runtime.wiring import parse_fragment

    return HostToolServers(
        literal,
        thredz_block(fragment),
        log,
        forward_facts=not scoped,
        fragment=parse_fragment(fragment) if fragment is not None else None,
    )


def thredz_block(fragment: Mapping[str, Any] | None) -> Mapping[str, Any] | None:
    """The fragment's ``thredz`` block (its server's name and whether goals are mirrored)."""
    block = fragment.get("thredz") if fragment is not None else None
    return block if isinstance(block, Mapping) and isinstance(block.get("server"), str) else None
