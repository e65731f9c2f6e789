"""Screening a tool's input with the injection scanner before it is written to memory.

Continuity notes (focus, plan titles and steps, goals) are read into every later session's
prompt, like facts, so a write the scanner flags is refused with the rule that fired and nothing
is changed (the tool result never echoes the text).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from pydantic import BaseModel

from specwire.runtime.core.tool_types import ToolContext, ToolHandler, ToolResult
from specwire.runtime.safety.injection import scan


def screened(handler: ToolHandler) -> ToolHandler:
    def handle(parsed: Any, ctx: ToolContext) -> ToolResult:
        data = parsed.model_dump() if isinstance(parsed, BaseModel) else parsed
        hit = scan("\n".join(_strings(data)))
        if hit is not None:
            return ToolResult(
                f"not written: the injection scanner flagged this input (rule {hit.label}); "
                "nothing was changed",
                is_error=True,
            )
        return handler(parsed, ctx)

    return handle


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _strings(item)
