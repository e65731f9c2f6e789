"""``thredz``: the agent's facts and wiki through the Thredz MCP server, its goals mirrored there.

The memory tools keep their names (``Remember``, ``Recall``, ``MemoryForget``, the ten ``wiki_*``
tools): each one the server lists is forwarded to the server's tool of the same name (the Thredz
vocabulary; ``codegen memory mcp --allow-writes`` serves exactly these names and stands in for
Thredz in the tests), and its reply is screened and framed like any MCP reply. Auto-recall asks
the server's ``Recall`` (and ``wiki_recall`` when the wiki is on). ``GoalWrite`` and
``GoalUpdate`` write the local goal first and then mirror the same call (``thredz.goals``):
local continuity stays authoritative.

Where facts are scoped to people (``memory.scope``: channel and managed hosts, issue 21) the fact
tools and fact auto-recall stay local (``facts=False``): Thredz keeps one visibility per account,
so a person's fact forwarded there would be recalled for everyone. The wiki (the agent's shared
knowledge) and spec-wide goals still go to Thredz.

Thredz failing degrades the run: a server that does not start, or a call that fails, logs
``DEGRADED_LINE`` once, and from then on every memory tool and recall of the run uses the local
stores (wired as usual under ``.specwire/``), so nothing is lost and the turn still answers.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final

from specwire.runtime.core.fragment import WIKI_TOOL_NAMES
from specwire.runtime.core.seams import LoopOptions, MemorySeam
from specwire.runtime.core.tool_types import Tool, ToolCatalog, ToolContext, ToolResult
from specwire.runtime.safety.injection import scan
from specwire.runtime.safety.redaction import redact_data
from specwire.runtime.tools.mcp_servers.state_folder import strings_in
from specwire.runtime.tools.mcp_servers.tools import reply_text, screened_result

if TYPE_CHECKING:
    from mcp.types import CallToolResult

DEGRADED_LINE: Final = (
    "[thredz] unavailable — memory degraded to the local backend for this run (local stores "
    "under .specwire/ stay authoritative; nothing was lost)"
)
FACT_TOOLS: Final = ("Remember", "Recall", "MemoryForget")
FORWARDED_TOOLS: Final = frozenset((*FACT_TOOLS, *WIKI_TOOL_NAMES))
GOAL_TOOLS: Final = frozenset(("GoalWrite", "GoalUpdate"))
CALL_TIMEOUT_SECONDS: Final = 30.0
_BULLET: Final = "• "

RemoteCall = Callable[[str, dict[str, Any], float], "CallToolResult"]


class ThredzLink:
    """The Thredz server for this run: its call and the tools it listed, until it fails."""

    def __init__(
        self,
        server: str,
        call: RemoteCall | None,
        listed: frozenset[str],
        log: Callable[[str], None],
        *,
        why: str | None = None,
    ) -> None:
        self.server = server
        self._call = call
        self.listed = listed if call is not None else frozenset()
        self._log = log
        self._lock = threading.Lock()
        self.degraded = False
        if call is None:
            self.degrade(why)

    def degrade(self, why: str | None = None) -> None:
        """Say once that this run goes on with the local stores (``why``: the failure)."""
        with self._lock:
            if self.degraded:
                return
            self.degraded = True
        self._log(DEGRADED_LINE + (f" — {why}" if why else "") + "\n")

    def offers(self, tool: str) -> bool:
        return not self.degraded and tool in self.listed

    def call(self, tool: str, arguments: dict[str, Any]) -> CallToolResult | None:
        """The server's reply, or None once the run is degraded (this call may degrade it)."""
        if not self.offers(tool) or self._call is None:
            return None
        try:
            return self._call(tool, arguments, CALL_TIMEOUT_SECONDS)
        except Exception as exc:  # the server died, timed out or broke the protocol
            self.degrade(f"{tool} failed ({type(exc).__name__})")
            return None


def _arguments(parsed: Any) -> dict[str, Any]:
    """The call's arguments as sent to the server: secret values replaced by their names, as
    every local write has them (``safety.redaction``): Thredz is storage too."""
    dumped = parsed.model_dump(mode="json", exclude_none=True)
    redacted = redact_data(dumped)
    return redacted if isinstance(redacted, dict) else {}


def forwarding(tool: Tool, link: ThredzLink) -> Tool:
    """``tool`` run on the server (same name and input); locally once the run is degraded.

    What a writing tool would store there is scanned first, as a local write is: Thredz is
    shared memory, and a flagged write is refused unsent."""
    local = tool.handler

    def handle(parsed: Any, ctx: ToolContext) -> ToolResult:
        arguments = _arguments(parsed)
        if not tool.read_only:
            hit = next(filter(None, (scan(text) for text in strings_in(arguments))), None)
            if hit is not None:
                return ToolResult(
                    f"{tool.name}: refused: the injection scanner flagged the input (rule "
                    f"{hit.label}); nothing was sent to Thredz",
                    True,
                )
        result = link.call(tool.name, arguments)
        if result is None:
            return local(parsed, ctx)
        return screened_result(link.server, tool.name, result)

    return dataclasses.replace(tool, handler=handle, scope="external")


def mirroring(tool: Tool, link: ThredzLink) -> Tool:
    """``GoalWrite``/``GoalUpdate``: the local goal first (authoritative), then the same call on
    the server."""
    local = tool.handler

    def handle(parsed: Any, ctx: ToolContext) -> ToolResult:
        result = local(parsed, ctx)
        if not result.is_error:
            link.call(tool.name, _arguments(parsed))
        return result

    return dataclasses.replace(tool, handler=handle)


def recalled_lines(result: CallToolResult) -> list[str]:
    """The recalled texts of a ``Recall``/``wiki_recall`` reply, one per bullet or line, with
    any the injection scanner flags left out."""
    if result.is_error:
        return []
    lines: list[str] = []
    for raw in reply_text(result).splitlines():
        line = raw.strip()
        if line.startswith(_BULLET):
            line = line[len(_BULLET) :]
            if line.startswith("(") and ") " in line:
                line = line.split(") ", 1)[1]
        elif not line.startswith("[wiki:"):
            continue
        if line and scan(line) is None:
            lines.append(line)
    return lines


def _remote_recall(
    link: ThredzLink, local: Callable[[str, int], list[str]] | None, wiki_on: bool
) -> Callable[[str, int], list[str]]:
    def recall(query: str, k: int) -> list[str]:
        facts = link.call("Recall", {"query": query, "k": max(1, min(k, 50))})
        if facts is None:
            return local(query, k) if local is not None else []
        lines = recalled_lines(facts)
        if wiki_on:
            wiki = link.call("wiki_recall", {"query": query})
            if wiki is None:  # degraded between the two calls
                return local(query, k) if local is not None else lines
            lines += recalled_lines(wiki)
        return lines

    return recall


def bridge_memory(
    catalog: ToolCatalog,
    options: LoopOptions,
    link: ThredzLink,
    *,
    goals: bool,
    facts: bool = True,
) -> tuple[ToolCatalog, LoopOptions]:
    """The catalog with the memory tools the server lists forwarded there (the fact tools only
    with ``facts``; ``GoalWrite`` and ``GoalUpdate`` mirrored when ``goals``), and the options
    with auto-recall asking the server first (only with ``facts``)."""
    forwarded = FORWARDED_TOOLS if facts else FORWARDED_TOOLS - set(FACT_TOOLS)
    bridged = ToolCatalog()
    for tool in catalog:
        if tool.name in forwarded and link.offers(tool.name):
            bridged.register(forwarding(tool, link))
        elif tool.name in GOAL_TOOLS and goals and link.offers(tool.name):
            bridged.register(mirroring(tool, link))
        else:
            bridged.register(tool)
    bridged_options = LoopOptions(**options)
    seam = options.get("memory")
    if facts and isinstance(seam, MemorySeam) and seam.recall is not None and link.offers("Recall"):
        wiki_on = catalog.get("wiki_recall") is not None and link.offers("wiki_recall")
        bridged_options["memory"] = dataclasses.replace(
            seam, recall=_remote_recall(link, seam.recall, wiki_on)
        )
    return bridged, bridged_options
