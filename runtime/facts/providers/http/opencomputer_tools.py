"""An OpenComputer endpoint's own tools (``memory.tools``), shown to the model as ``memory_<name>``.

Each tool's input schema is the spec's, as written. The host checks the model's arguments
against it before anything is sent (``tool_schema``), drops the reserved ``memory`` argument
(one endpoint per spec: there is no resource to choose), sends the cursor of this request's
recall (the model never sees or picks it), and hands the model the endpoint's ``result``
unchanged as JSON. The error envelope becomes a tool error (``memory_<name>: <code>: <message>``
and the details); an unconfirmed non-idempotent write is the result ``{"status": "uncertain"}``.
A read-only binding shows no write tools.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict

from specwire.runtime.core.fragment import MEMORY_TOOL_PREFIX, MEMORY_TOOL_RESERVED_ARGUMENT
from specwire.runtime.core.fragment_data import MemoryToolData
from specwire.runtime.core.tool_types import Tool, ToolContext, ToolResult
from specwire.runtime.facts.providers.http.opencomputer_provider import OpenComputerFactProvider
from specwire.runtime.facts.providers.http.tool_schema import problem

# What the model is shown of an endpoint's message and details, at most.
MAX_ERROR_CHARS = 2000


class ProviderToolArguments(BaseModel):
    """Any JSON object: the tool's own schema is checked by the handler (``tool_schema``)."""

    model_config = ConfigDict(extra="allow")


@dataclass(frozen=True)
class ProviderTool(Tool):
    """A tool whose input schema is the spec's JSON Schema, not a pydantic model's."""

    schema: dict[str, Any] = field(default_factory=dict)

    def input_schema(self) -> dict[str, Any]:
        return copy.deepcopy(self.schema)


def provider_tools(
    declared: tuple[MemoryToolData, ...], provider: OpenComputerFactProvider
) -> list[Tool]:
    """The model's tools for the endpoint's declared tools (write tools only when the binding
    is read-write)."""
    writable = provider.client.access == "read-write"
    return [_tool(spec, provider) for spec in declared if spec.access == "read" or writable]


def _tool(spec: MemoryToolData, provider: OpenComputerFactProvider) -> Tool:
    schema = json.loads(spec.input_schema)
    name = MEMORY_TOOL_PREFIX + spec.name
    write = spec.access == "write"
    idempotent = bool(spec.idempotent)

    def handle(parsed: Any, ctx: ToolContext) -> ToolResult:
        arguments = dict(parsed.model_extra or {})
        arguments.pop(MEMORY_TOOL_RESERVED_ARGUMENT, None)
        wrong = problem(arguments, schema)
        if wrong is not None:
            return ToolResult(f"{name}: invalid input: {wrong}", True)
        outcome = provider.client.call_tool(
            spec.name, arguments, write=write, idempotent=idempotent, cursor=provider.cursor
        )
        if outcome.error is not None:
            said = f"{outcome.error.code}: {outcome.error.message}"
            if outcome.error.details is not None:
                said += f" (details: {json.dumps(outcome.error.details, ensure_ascii=False)})"
            return ToolResult(f"{name}: {said[:MAX_ERROR_CHARS]}", True)
        if outcome.failure is not None:
            return ToolResult(f"{name}: {outcome.failure[:MAX_ERROR_CHARS]}", True)
        return ToolResult(json.dumps(outcome.result, ensure_ascii=False))

    return ProviderTool(
        name,
        spec.description,
        ProviderToolArguments,
        handle,
        read_only=not write,
        schema=schema,
    )
