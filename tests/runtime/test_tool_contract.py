"""The tool contract: input validated at the boundary, the justification gate, the catalog."""

from __future__ import annotations

import pytest
from pydantic import BaseModel, ConfigDict

from specwire.runtime.core.tool_types import Tool, ToolCatalog, ToolContext, ToolResult

CTX = ToolContext(session_id="sess_0123456789abcdef", tool_use_id="tu_1")


class Wipe(BaseModel):
    model_config = ConfigDict(extra="forbid")
    target: str
    justification: str | None = None


class Plain(BaseModel):
    model_config = ConfigDict(extra="forbid")
    target: str


def wipe_tool(calls: list[str]) -> Tool:
    def handle(args: Wipe, ctx: ToolContext) -> ToolResult:
        calls.append(args.target)
        return ToolResult(f"wiped {args.target}")

    return Tool("Wipe", "Wipe a thing.", Wipe, handle, destructive=True, require_justification=True)


def test_invalid_input_is_an_error_result_naming_the_field() -> None:
    calls: list[str] = []
    result = wipe_tool(calls).invoke({"target": 3, "extra": 1}, CTX)
    assert result.is_error
    assert "target: " in result.text and "extra: " in result.text
    assert calls == []


@pytest.mark.parametrize("raw", [{"target": "a"}, {"target": "a", "justification": "  "}])
def test_a_tool_that_needs_a_justification_refuses_without_one(raw: dict[str, str]) -> None:
    calls: list[str] = []
    result = wipe_tool(calls).invoke(raw, CTX)
    assert (
        result.is_error and "justification" in result.text and "Nothing was changed" in result.text
    )
    assert calls == []


def test_with_a_justification_the_tool_runs() -> None:
    calls: list[str] = []
    result = wipe_tool(calls).invoke({"target": "a", "justification": "user asked"}, CTX)
    assert result == ToolResult("wiped a") and calls == ["a"]


def test_a_justified_tool_must_declare_the_field() -> None:
    with pytest.raises(ValueError, match="justification"):
        Tool("Bad", "x", Plain, lambda args, ctx: ToolResult("x"), require_justification=True)


def test_the_catalog_keeps_order_and_refuses_duplicates() -> None:
    catalog = ToolCatalog()
    catalog.register(wipe_tool([]))
    catalog.register(Tool("Echo", "x", Plain, lambda args, ctx: ToolResult(args.target)))
    assert catalog.names() == ["Wipe", "Echo"] and len(catalog) == 2
    with pytest.raises(ValueError, match="already registered"):
        catalog.register(wipe_tool([]))
    assert catalog.get("Echo") is not None and catalog.get("Nope") is None
