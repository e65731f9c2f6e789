"""The document tools: ``memory_save`` (read-write document bindings), ``memory_read`` and
``memory_list`` (collection bindings), each offered only when a binding needs it.

A result is OpenComputer's result object as JSON (sorted keys), not an error: a rejection or a
conflict is an answer the model continues from. Malformed arguments and store failures are
tool errors (``guarded``). Descriptions name the bindings each tool serves.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, Final

from specwire.runtime.core.tool_types import LazyInput, Tool, ToolContext, ToolResult, guarded
from specwire.runtime.documents.binding import DocumentSession, Result

INPUTS: Final = "specwire.runtime.documents.inputs"


def _json(result: Result) -> ToolResult:
    return ToolResult(json.dumps(result, ensure_ascii=False, sort_keys=True))


def _names(names: tuple[str, ...]) -> str:
    return ", ".join(f'"{name}"' for name in names)


def document_tools(session: DocumentSession) -> list[Tool]:
    """``memory_save`` when a binding is writable, then ``memory_read`` and ``memory_list``
    when one is a collection."""
    tools: list[Tool] = []
    if session.writable:
        tools.append(
            Tool(
                "memory_save",
                "Replace a bound document's whole text, and its summary (omit summary to keep "
                'it, "" clears it). Writable: '
                f"{_names(session.writable)}. Returns status saved (with the new revision), "
                "conflict (someone changed the document since you were shown it: the current "
                "text and summary are in the answer; reconcile, then save again) or rejected "
                "(with the reason).",
                LazyInput(INPUTS, "MemorySaveInput"),
                guarded("memory_save", _save(session)),
                destructive=True,
            )
        )
    if session.collections:
        served = _names(session.collections)
        tools.append(
            Tool(
                "memory_read",
                f"Read one document of the collection ({served}) in full: id, title, text, "
                "summary, revision, updatedAt.",
                LazyInput(INPUTS, "DocumentReadInput"),
                guarded("memory_read", _read(session)),
                read_only=True,
            )
        )
        tools.append(
            Tool(
                "memory_list",
                f"List the collection's documents ({served}), most recently updated first, 50 "
                "a page, without their text: {documents, nextCursor}; pass nextCursor back for "
                "the next page (null: no more).",
                LazyInput(INPUTS, "DocumentListInput"),
                guarded("memory_list", _list(session)),
                read_only=True,
            )
        )
    return tools


def _save(session: DocumentSession) -> Callable[[Any, ToolContext], ToolResult]:
    def handle(args: Any, ctx: ToolContext) -> ToolResult:
        return _json(
            session.save(
                args.memory, args.text, args.summary, session_id=ctx.session_id, emit=ctx.emit
            )
        )

    return handle


def _read(session: DocumentSession) -> Callable[[Any, ToolContext], ToolResult]:
    def handle(args: Any, ctx: ToolContext) -> ToolResult:
        return _json(session.read(args.memory, args.id))

    return handle


def _list(session: DocumentSession) -> Callable[[Any, ToolContext], ToolResult]:
    def handle(args: Any, ctx: ToolContext) -> ToolResult:
        return _json(session.listing(args.memory, args.cursor))

    return handle
