"""Tools: a name, a pydantic input model, flags, and a handler. The catalog collects them.

A tool names its input model lazily (``LazyInput``: the module and class that define it), so
listing a session's tools imports neither pydantic nor the models: the model is shown the
shipped schema (``tools/schemas.json``), and the input model is imported on the tool's first
call.

A result's text is valid Unicode: a lone surrogate in it (a file name that is not UTF-8, as
``ls`` or ``grep`` list it, or undecodable tool output) is replaced by U+FFFD in ``invoke``,
the one way every tool is called (``runtime.core.undecodable``).
"""

from __future__ import annotations

import builtins
import copy
import functools
import json
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from importlib import import_module
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

from specwire.runtime.core.errors import StoreError, TenancyError
from specwire.runtime.core.fragment import (
    CONTINUITY_TOOL_NAMES,
    DOCUMENT_TOOL_NAMES,
    FACT_TOOL_NAMES,
    LEARNING_TOOL_NAMES,
    MEMORY_TOOL_PREFIX,
    TIER_TOOL_NAMES,
    WIKI_TOOL_NAMES,
)
from specwire.runtime.core.lazy_dataclass import lazy_dataclass, lazy_methods_dataclass
from specwire.runtime.core.undecodable import valid_text

if TYPE_CHECKING:
    from pydantic import BaseModel, ValidationError

    from specwire.runtime.core.tool_input import ToolInput as ToolInput

EventSink = Callable[[str, Mapping[str, Any]], None]

# Tools that read or change the agent's own memory (facts, continuity, skills, wiki). Their calls
# are never evidence that work was done: the proof ladder refuses them and capture ignores them.
MEMORY_TOOL_NAMES: frozenset[str] = frozenset(
    {
        *FACT_TOOL_NAMES,
        *TIER_TOOL_NAMES,
        *DOCUMENT_TOOL_NAMES,
        *CONTINUITY_TOOL_NAMES,
        *WIKI_TOOL_NAMES,
        *LEARNING_TOOL_NAMES,  # a study pass and an exam change the wiki and the goals
        "Skill",
    }
)


# A delegation (crew) only reports another session's answer: the evidence is the tool call that
# session made (the proof ladder finds it through the sub-session link), never the delegation.
DELEGATE_TOOL_NAME = "Delegate"
NOT_EVIDENCE_TOOL_NAMES: frozenset[str] = MEMORY_TOOL_NAMES | {DELEGATE_TOOL_NAME}


def is_memory_tool(name: str) -> bool:
    """One of ``MEMORY_TOOL_NAMES``, or a memory endpoint's own tool (``memory_<name>``, from
    ``memory.tools``): those read or change memory too."""
    return name in MEMORY_TOOL_NAMES or name.startswith(MEMORY_TOOL_PREFIX)


def is_evidence_tool(name: str) -> bool:
    """Whether a verified call of this tool may stand as evidence that work was done."""
    return not is_memory_tool(name) and name != DELEGATE_TOOL_NAME


def _drop_event(kind: str, payload: Mapping[str, Any]) -> None:
    return None


@lazy_dataclass(frozen=True)
class ToolContext:
    """What a tool invocation knows about where it runs."""

    session_id: str
    tool_use_id: str
    # Appends an event to the current session log (plan_update, action_proof, ...).
    emit: EventSink = _drop_event


@lazy_dataclass(frozen=True)
class ToolResult:
    """What a tool returns to the model: its text, and whether the call failed."""

    text: str
    is_error: bool = False


ToolHandler = Callable[[Any, ToolContext], ToolResult]


@dataclass(frozen=True)
class LazyInput:
    """A tool's input model named by the module and class that define it: imported (with
    pydantic) on the tool's first call, not when the tool is listed."""

    module: str
    name: str

    @property
    def key(self) -> str:
        """The model's key in ``tools/schemas.json`` (``schema_key`` of the class)."""
        return f"{self.module}.{self.name}"

    def load(self) -> type[BaseModel]:
        model: type[BaseModel] = getattr(import_module(self.module), self.name)
        return model


@lazy_methods_dataclass(frozen=True)
class Tool:
    """A tool the model may call: name, description, input model and handler."""

    name: str
    description: str
    input_model: type[BaseModel] | LazyInput
    handler: ToolHandler
    read_only: bool = False
    destructive: bool = False
    require_justification: bool = False
    scope: Literal["internal", "external"] = "internal"

    def __post_init__(self) -> None:
        if self.require_justification and "justification" not in _field_names(self.input_model):
            raise ValueError(
                f"tool {self.name!r} requires a justification but its input has no "
                "`justification` field to carry it"
            )

    def model(self) -> type[BaseModel]:
        """The input model, imported on first use when it is named lazily."""
        model = self.input_model
        return model.load() if isinstance(model, LazyInput) else model

    def input_schema(self) -> dict[str, Any]:
        return copy.deepcopy(_schema_of(self.input_model))

    def invoke(self, raw_input: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        """Validate the input at the boundary, then run the handler.

        Invalid input never raises: it becomes an error result naming the offending field.
        """
        model = self.model()
        from pydantic import ValidationError

        try:
            parsed = model.model_validate(dict(raw_input))
        except ValidationError as exc:
            return ToolResult(f"{self.name}: invalid input: {format_validation_error(exc)}", True)
        if self.require_justification and not _has_text(getattr(parsed, "justification", None)):
            return ToolResult(
                f"{self.name}: this action needs a justification — say in `justification` why "
                "it is needed. Nothing was changed.",
                True,
            )
        result = self.handler(parsed, ctx)
        text = valid_text(result.text)
        return result if text is result.text else ToolResult(text, result.is_error)


class ToolRefusal(Exception):
    """A request a tool turns down; its message is shown to the model."""


def guarded(name: str, handler: ToolHandler, *, name_refusals: bool = True) -> ToolHandler:
    """The error guard every tool family runs its handlers under: a tool never crashes.

    A refusal (``ToolRefusal``, a store's ``StoreError``) becomes an error result with its
    message (after ``"<name>: "`` unless ``name_refusals`` is false, for tools whose messages
    already say what refused); a tenancy fence ``"<name>: refused: …"``; an operating-system
    error its reason (never an absolute path); anything else an internal error naming its type.
    """

    def handle(parsed: Any, ctx: ToolContext) -> ToolResult:
        try:
            return handler(parsed, ctx)
        except (ToolRefusal, StoreError) as exc:
            return ToolResult(f"{name}: {exc}" if name_refusals else str(exc), True)
        except TenancyError as exc:
            return ToolResult(f"{name}: refused: {exc}", True)
        except OSError as exc:
            return ToolResult(f"{name}: {exc.strerror or type(exc).__name__}", True)
        except Exception as exc:
            return ToolResult(f"{name}: internal error ({type(exc).__name__}): {exc}", True)

    return handle


# A tool family's declaration: name → (input model, handler, Tool flags such as read_only).
ToolTable = Mapping[str, tuple["type[BaseModel] | LazyInput", ToolHandler, Mapping[str, Any]]]


def tools_from_table(
    names: Iterable[str], descriptions: Mapping[str, str], table: ToolTable
) -> list[Tool]:
    """The named tools of a family, in ``names`` order, each under ``guarded`` (the tools'
    messages already say what refused)."""
    return [
        Tool(
            name,
            descriptions[name],
            table[name][0],
            guarded(name, table[name][1], name_refusals=False),
            **table[name][2],
        )
        for name in names
    ]


def __getattr__(name: str) -> Any:
    # ``ToolInput`` subclasses pydantic's BaseModel: it is defined in its own module, so that
    # importing this one (every tool family does) does not import pydantic.
    if name == "ToolInput":
        from specwire.runtime.core.tool_input import ToolInput

        return ToolInput
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


SCHEMAS_FILE = Path(__file__).parents[1] / "tools" / "schemas.json"


def schema_key(model: type[BaseModel]) -> str:
    return f"{model.__module__}.{model.__qualname__}"


@functools.cache
def _shipped_schemas() -> dict[str, dict[str, Any]]:
    try:
        loaded = json.loads(SCHEMAS_FILE.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return loaded if isinstance(loaded, dict) else {}


@functools.cache
def _schema_of(model: type[BaseModel] | LazyInput) -> dict[str, Any]:
    """A model's JSON schema, once per process: the shipped copy, else computed."""
    key = model.key if isinstance(model, LazyInput) else schema_key(model)
    shipped = _shipped_schemas().get(key)
    if isinstance(shipped, dict):
        return shipped
    loaded = model.load() if isinstance(model, LazyInput) else model
    return loaded.model_json_schema()


def _field_names(model: type[BaseModel] | LazyInput) -> set[str]:
    if isinstance(model, LazyInput):
        properties = _schema_of(model).get("properties")
        return set(properties) if isinstance(properties, dict) else set()
    return set(model.model_fields)


def _has_text(value: object) -> bool:
    return isinstance(value, str) and bool(value.strip())


def format_validation_error(exc: ValidationError) -> str:
    parts = []
    for error in exc.errors():
        where = ".".join(str(p) for p in error["loc"]) or "(input)"
        parts.append(f"{where}: {error['msg']}")
    return "; ".join(parts)


class Catalog(Protocol):
    def register(self, tool: Tool) -> None: ...


@lazy_methods_dataclass
class ToolCatalog:
    """An ordered tool registry; registering a name twice is an error."""

    _tools: dict[str, Tool] = field(default_factory=dict)

    def register(self, tool: Tool) -> None:
        if tool.name in self._tools:
            raise ValueError(f"tool {tool.name!r} is already registered")
        self._tools[tool.name] = tool

    def get(self, name: str) -> Tool | None:
        return self._tools.get(name)

    def list(self) -> list[Tool]:
        return list(self._tools.values())

    def names(self) -> builtins.list[str]:
        return list(self._tools)

    def __iter__(self) -> Iterator[Tool]:
        return iter(self._tools.values())

    def __len__(self) -> int:
        return len(self._tools)
