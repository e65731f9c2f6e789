"""The tool contract: input validated at the boundary, the justification gate, the catalog."""

from __future__ import annotations

import pytest
from pydantic import BaseModel, ConfigDict

from specwire.runtime.core.tool_types import LazyInput, Tool, ToolCatalog, ToolContext, ToolResult
from specwire.runtime.tools.builtin import builtin_catalog

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


# A lazily named input model: where this module defines ``Wipe`` and ``Plain``.
LAZY_WIPE = LazyInput(__name__, "Wipe")
LAZY_PLAIN = LazyInput(__name__, "Plain")


def test_a_lazily_named_input_validates_as_the_model_itself() -> None:
    calls: list[str] = []
    eager = wipe_tool(calls)
    lazy = Tool("Wipe", "Wipe a thing.", LAZY_WIPE, eager.handler, require_justification=True)
    for raw in ({"target": 3, "extra": 1}, {"target": "a"}, {"target": "a", "justification": "x"}):
        assert lazy.invoke(raw, CTX) == eager.invoke(raw, CTX)
    assert lazy.model() is Wipe
    assert lazy.input_schema() == eager.input_schema() == Wipe.model_json_schema()


def test_a_lazily_named_justified_tool_must_declare_the_field() -> None:
    with pytest.raises(ValueError, match="justification"):
        Tool("Bad", "x", LAZY_PLAIN, lambda args, ctx: ToolResult("x"), require_justification=True)


def test_every_builtin_tool_names_a_model_that_has_its_shipped_schema() -> None:
    catalog = builtin_catalog(["read", "write", "ls", "grep"])
    for tool in catalog:
        assert isinstance(tool.input_model, LazyInput)
        assert tool.input_schema() == tool.model().model_json_schema()
