"""Shared pieces for the agent-loop tests: real session logs, real tools, scripted models."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from specwire.runtime.core.ids import new_session_id
from specwire.runtime.core.tool_types import Tool, ToolCatalog, ToolContext, ToolResult
from specwire.runtime.models import Model, ModelRequest, ModelResponse, ReplayModel
from specwire.runtime.sessions.log import SessionLog, read_events


def new_log(tmp_path: Path) -> SessionLog:
    return SessionLog(tmp_path / "sessions", new_session_id())


def events(log: SessionLog) -> list[tuple[str, dict[str, Any]]]:
    return [(event.type, event.payload) for event in read_events(log.path)]


def kinds(log: SessionLog) -> list[str]:
    return [kind for kind, _ in events(log)]


def payloads(log: SessionLog, kind: str) -> list[dict[str, Any]]:
    return [payload for k, payload in events(log) if k == kind]


def replay(tmp_path: Path, responses: list[dict[str, Any]]) -> ReplayModel:
    path = tmp_path / "script.json"
    path.write_text(json.dumps(responses), encoding="utf-8")
    return ReplayModel(path)


class TextInput(BaseModel):
    model_config = ConfigDict(extra="forbid")
    text: str


def echo_tool(name: str = "Echo") -> Tool:
    def handle(parsed: Any, ctx: ToolContext) -> ToolResult:
        return ToolResult(f"echo: {parsed.text}")

    return Tool(name, "Echo the text back.", TextInput, handle)


def failing_tool(name: str = "Explode") -> Tool:
    def handle(parsed: Any, ctx: ToolContext) -> ToolResult:
        raise RuntimeError("kaboom")

    return Tool(name, "Always raises.", TextInput, handle)


def plan_tool(name: str = "PlanUpdate") -> Tool:
    """Emits a plan_update event the way continuity tools do."""

    def handle(parsed: Any, ctx: ToolContext) -> ToolResult:
        ctx.emit("plan_update", {"planId": "plan-0001", "action": "create", "title": parsed.text})
        return ToolResult(f"plan-0001 created: {parsed.text}")

    return Tool(name, "Create a plan.", TextInput, handle)


def catalog_of(*tools: Tool) -> ToolCatalog:
    catalog = ToolCatalog()
    for tool in tools:
        catalog.register(tool)
    return catalog


class Recording:
    """Wraps a model and keeps every request it was sent."""

    def __init__(self, inner: Model) -> None:
        self.inner = inner
        self.requests: list[ModelRequest] = []

    @property
    def model_id(self) -> str:
        return self.inner.model_id

    def complete(self, request: ModelRequest) -> ModelResponse:
        self.requests.append(request)
        return self.inner.complete(request)


class FailsOnCall:
    """A model whose n-th call raises (the way a network adapter fails mid-session)."""

    def __init__(self, inner: Model, failing_call: int, error: BaseException) -> None:
        self.inner = inner
        self.failing_call = failing_call
        self.error = error
        self.calls = 0

    @property
    def model_id(self) -> str:
        return self.inner.model_id

    def complete(self, request: ModelRequest) -> ModelResponse:
        self.calls += 1
        if self.calls == self.failing_call:
            raise self.error
        return self.inner.complete(request)
