"""Running the model's tool calls: log the use, invoke the tool, log the result.

Every call gets a ``tool_use`` and a ``tool_result`` event (the evidence the proof ladder
resolves). A tool that is unknown, rejects its input or raises becomes an error result; the loop
never crashes on a tool. After a ``plan_update`` / ``goal_update`` event or any successful
non-read-only tool, ``continuity_dirty`` is set so the loop re-renders the plan tail. Tools may
append their own events (``plan_update``, ``action_proof``…) through ``ToolContext.emit``, but
never the loop's own kinds, so a tool cannot forge evidence.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from specwire.runtime.core.ids import new_tool_use_id
from specwire.runtime.core.seams import Skill
from specwire.runtime.core.tool_types import LazyInput, Tool, ToolCatalog, ToolContext, ToolResult
from specwire.runtime.core.undecodable import valid_data
from specwire.runtime.models.types import ToolCall, ToolSpec
from specwire.runtime.safety.redaction import redact, redact_data
from specwire.runtime.sessions.store import SessionRecorder

# Event kinds only the loop writes.
LOOP_EVENT_KINDS = frozenset(
    {
        "session_start",
        "session_end",
        "user_message",
        "assistant_message",
        "tool_use",
        "tool_result",
        "recall",
        "context",
        "context_refresh",
        "context_evicted",
    }
)
CONTINUITY_EVENT_KINDS = frozenset({"plan_update", "goal_update"})
_TOOL_USE_ID_LEN = len("tu_") + 16


def _valid_tool_use_id(value: str) -> bool:
    hex_part = value[3:]
    return (
        len(value) == _TOOL_USE_ID_LEN
        and value.startswith("tu_")
        and all(c in "0123456789abcdef" for c in hex_part)
    )


SKILL_TOOL_NAME = "Skill"


def skill_tool(skills: Sequence[Skill]) -> Tool:
    """``Skill {name}``: returns the body of one of the session's skills."""
    by_name = {skill.name: skill for skill in skills}

    def handle(parsed: Any, ctx: ToolContext) -> ToolResult:
        skill = by_name.get(parsed.name)
        if skill is None:
            known = ", ".join(by_name) or "none"
            return ToolResult(f'no skill named "{parsed.name}" (skills: {known})', True)
        return ToolResult(skill.body)

    return Tool(
        name=SKILL_TOOL_NAME,
        description="Load the full instructions of a skill listed in the prompt.",
        input_model=LazyInput("specwire.runtime.loop.skill_input", "_SkillInput"),
        handler=handle,
        read_only=True,
    )


class ToolRunner:
    def __init__(
        self,
        catalog: ToolCatalog,
        session_log: SessionRecorder,
        log: Callable[[str], None],
        extra_tools: Sequence[Tool] = (),
    ) -> None:
        self._catalog = catalog
        self._extra = {tool.name: tool for tool in extra_tools if catalog.get(tool.name) is None}
        self._session_log = session_log
        self._log = log
        self._used_ids: set[str] = set()
        self.continuity_dirty = False
        self._specs: list[ToolSpec] | None = None

    def tools(self) -> list[Tool]:
        return [*self._catalog.list(), *self._extra.values()]

    def specs(self) -> list[ToolSpec]:
        """The tools as the model sees them (computed once: a session's tools do not change)."""
        if self._specs is None:
            self._specs = [ToolSpec(t.name, t.description, t.input_schema()) for t in self.tools()]
        return list(self._specs)

    def _lookup(self, name: str) -> Tool | None:
        return self._catalog.get(name) or self._extra.get(name)

    def reserve_ids(self, ids: Iterable[str]) -> None:
        """Ids the conversation already used (replayed history): never handed out again."""
        self._used_ids.update(ids)

    def assign_id(self, call: ToolCall) -> ToolCall:
        """Keep the model's id when it is a fresh ``tu_<16 hex>``; otherwise mint one."""
        call_id = call.id
        while not _valid_tool_use_id(call_id) or call_id in self._used_ids:
            call_id = new_tool_use_id()
        self._used_ids.add(call_id)
        return call if call_id == call.id else replace(call, id=call_id)

    def emit(self, kind: str, payload: Mapping[str, Any]) -> None:
        if kind in LOOP_EVENT_KINDS:
            self._log(f"[loop] warning: a tool tried to write a {kind!r} event; dropped\n")
            return
        self._session_log.append(kind, payload)
        if kind in CONTINUITY_EVENT_KINDS:
            self.continuity_dirty = True

    def run(self, call: ToolCall) -> ToolResult:
        """Run one call (its id already assigned), logging the use and the result.

        A secret value in the input or the result is replaced by its reference's name before
        the tool or the model sees it, so it cannot travel on into facts, plans or handoffs.
        """
        call = replace(call, input=valid_data(redact_data(call.input)))
        self._session_log.append(
            "tool_use", {"id": call.id, "name": call.name, "input": call.input}
        )
        if call.malformed:
            result = ToolResult(f"{call.name} was not run: {call.malformed}", True)
        else:
            result = self._invoke(call)
        result = replace(result, text=redact(result.text))
        self._session_log.append(
            "tool_result",
            {
                "toolUseId": call.id,
                "name": call.name,
                "isError": result.is_error,
                "text": result.text,
            },
        )
        return result

    def _invoke(self, call: ToolCall) -> ToolResult:
        tool = self._lookup(call.name)
        if tool is None:
            known = ", ".join(t.name for t in self.tools()) or "none"
            return ToolResult(f'unknown tool "{call.name}" (available tools: {known})', True)
        ctx = ToolContext(self._session_log.session_id, call.id, emit=self.emit)
        try:
            result = tool.invoke(call.input, ctx)
        except Exception as exc:  # a tool bug must not take the session down
            return ToolResult(f"{call.name} failed: {type(exc).__name__}: {exc}", True)
        if not result.is_error and not tool.read_only:
            # A write may have changed the focus or the plan without a plan_update event
            # (FocusWrite, MemoryClear, a shell command editing the files by hand).
            self.continuity_dirty = True
        return result
