"""The memory tools ``codegen memory mcp`` serves: the ones the bundle's agent gets, wired by
``wire_memory`` for one audience (the owner's scope flags) and one tenant, so scopes,
screening and tenancy are the bundle's own.

Read-only unless the owner opts in: a tool is served without ``--allow-writes`` only when it is
on ``READ_TOOL_NAMES`` or declares ``read_only``; anything else (a new tool too) counts as a
write. Only memory tools are served, never a builtin (``bash``, ``read``) or ``Skill``.
Every call runs on one worker thread (the stores were opened there).
"""

from __future__ import annotations

from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from specwire.runtime.core.fragment import WIKI_TOOL_NAMES
from specwire.runtime.core.ids import new_session_id, new_tool_use_id
from specwire.runtime.core.scopes import Audience
from specwire.runtime.core.tenancy import Tenant
from specwire.runtime.core.tool_types import Tool, ToolCatalog, ToolContext, is_memory_tool

# The tools that change the wiki; every other wiki tool reads.
_WIKI_WRITERS: frozenset[str] = frozenset({"wiki_write", "wiki_set_signals", "log_knowledge_gap"})
READ_TOOL_NAMES: frozenset[str] = frozenset(
    {
        "Recall",
        "MemoryRead",
        "FocusRead",
        "PlanRead",
        "GoalList",
        "memory_read",
        "memory_search",
        "memory_list",
        *(name for name in WIKI_TOOL_NAMES if name not in _WIKI_WRITERS),
    }
)
NEVER_SERVED: frozenset[str] = frozenset({"Skill"})


@dataclass(frozen=True)
class ServedTool:
    name: str
    description: str
    input_schema: dict[str, Any]
    writes: bool


@dataclass(frozen=True)
class CallOutcome:
    text: str
    is_error: bool


def is_read_tool(tool: Tool) -> bool:
    return tool.read_only or tool.name in READ_TOOL_NAMES


class MemoryToolset:
    """An agent's memory tools for one audience, opened on a worker thread; ``close`` it."""

    def __init__(
        self,
        fragment: Mapping[str, Any],
        *,
        cwd: Path,
        tenant: Tenant | None,
        audience: Audience | None,
        session: str | None,
        allow_writes: bool,
    ) -> None:
        self._worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="memory-mcp")
        self._session_id = session or new_session_id()
        try:
            self._tools, self._close = self._worker.submit(
                _wire, fragment, cwd, tenant, audience, session, allow_writes
            ).result()
        except BaseException:
            self._worker.shutdown(wait=False)
            raise

    def listing(self) -> list[ServedTool]:
        return [
            ServedTool(tool.name, tool.description, tool.input_schema(), not is_read_tool(tool))
            for tool in self._tools.values()
        ]

    def call(self, name: str, arguments: Mapping[str, Any]) -> CallOutcome:
        """Run one tool on the worker thread; an unknown (or unserved) name is an error."""
        tool = self._tools.get(name)
        if tool is None:
            return CallOutcome(f"{name}: no such tool (or not served without --allow-writes)", True)
        ctx = ToolContext(session_id=self._session_id, tool_use_id=new_tool_use_id())
        result = self._worker.submit(tool.invoke, arguments, ctx).result()
        return CallOutcome(result.text, result.is_error)

    def close(self) -> None:
        try:
            self._worker.submit(self._close).result()
        finally:
            self._worker.shutdown(wait=True)


def _wire(
    fragment: Mapping[str, Any],
    cwd: Path,
    tenant: Tenant | None,
    audience: Audience | None,
    session: str | None,
    allow_writes: bool,
) -> tuple[dict[str, Tool], Any]:
    from specwire.runtime.wiring import MemoryDeps, wire_memory

    catalog = ToolCatalog()
    wired = wire_memory(
        fragment,
        MemoryDeps(
            catalog=catalog,
            cwd=cwd,
            tenant=tenant,
            session_scope=session,
            audience=audience,
            log=lambda line: None,
        ),
    )
    served = {
        tool.name: tool
        for tool in [*catalog.list(), *wired.tools]
        if is_memory_tool(tool.name)
        and tool.name not in NEVER_SERVED
        and (allow_writes or is_read_tool(tool))
    }
    return dict(sorted(served.items())), wired.close
