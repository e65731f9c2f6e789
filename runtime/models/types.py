"""What the agent loop sends a model and what it gets back.

A request carries typed system blocks (in prompt order), the conversation messages and the tool
specs; a response carries text and tool calls. Tool-call ids are ``tu_<16 hex>``: the scripted
models mint them, and the loop re-mints any id that is malformed or already used in the session,
so the ids in the conversation are exactly the ids in the session log.
"""

from __future__ import annotations

from dataclasses import field
from typing import Any, Literal, Protocol

from specwire.runtime.core.lazy_dataclass import lazy_dataclass, lazy_methods_dataclass

SystemBlockKind = Literal[
    "instructions",
    "recalled_memory",
    "agent_memory",
    "crew_memory",
    "document_memory",
    "handoff",
    "continuity_tail",
    "skills",
]


@lazy_methods_dataclass(frozen=True)
class SystemBlock:
    """One block of the system prompt, of a known kind."""

    kind: SystemBlockKind
    text: str


@lazy_methods_dataclass(frozen=True)
class ToolSpec:
    """A tool as the model is shown it: name, description and JSON schema."""

    name: str
    description: str
    input_schema: dict[str, Any]


@lazy_dataclass(frozen=True)
class ToolCall:
    """A tool call the model asked for."""

    id: str
    name: str
    input: dict[str, Any]
    # Why the host will not run it (its arguments were cut off or not a JSON object): the
    # loop answers the model with this instead of running the tool on made-up input.
    malformed: str = ""


@lazy_methods_dataclass(frozen=True)
class UserMessage:
    """A user message in the conversation."""

    text: str
    # True when the loop injected it (an expanded slash command), not typed by a person.
    synthetic: bool = False
    role: Literal["user"] = "user"


@lazy_methods_dataclass(frozen=True)
class AssistantMessage:
    """The model's answer: its text and the tool calls it asked for."""

    text: str
    tool_calls: tuple[ToolCall, ...] = ()
    role: Literal["assistant"] = "assistant"


@lazy_dataclass(frozen=True)
class ToolResultMessage:
    """A tool's result, answering one tool call."""

    tool_use_id: str
    name: str
    text: str
    is_error: bool = False
    role: Literal["tool"] = "tool"


Message = UserMessage | AssistantMessage | ToolResultMessage


@lazy_methods_dataclass(frozen=True)
class ModelRequest:
    """One model call: the system blocks, the conversation and the tools."""

    system: list[SystemBlock]
    messages: list[Message]
    tools: list[ToolSpec]
    # At most this many answer tokens (None: the adapter's own limit). A caller with a budget
    # sets it (the dream's ``BudgetedModel``); an adapter sends the lower of it and its limit.
    max_output_tokens: int | None = None

    def block(self, kind: SystemBlockKind) -> SystemBlock | None:
        """The first system block of ``kind``, if the prompt has one."""
        return next((block for block in self.system if block.kind == kind), None)

    def tool_names(self) -> list[str]:
        return [tool.name for tool in self.tools]


@lazy_methods_dataclass(frozen=True)
class Usage:
    """Tokens one model call used: ``input`` (all prompt tokens, cached ones included),
    ``output``, and ``cached`` (prompt tokens read from the provider's cache)."""

    input: int = 0
    output: int = 0
    cached: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.input + other.input, self.output + other.output, self.cached + other.cached
        )

    def payload(self) -> dict[str, int]:
        return {"input": self.input, "output": self.output, "cached": self.cached}


@lazy_methods_dataclass(frozen=True)
class ModelResponse:
    """What one model call returned: text, tool calls and token usage."""

    text: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    usage: Usage | None = None  # None when the model does not report it


class Model(Protocol):
    """A chat model. ``complete`` must not mutate the request."""

    @property
    def model_id(self) -> str: ...

    def complete(self, request: ModelRequest) -> ModelResponse: ...
