"""Streaming: what a model call reports while it is still being written.

A ``StreamSink`` receives ``StreamEvent``s in order, from the thread that runs the turn:

- ``TextDelta(text)``: the next piece of the answer's text (never empty);
- ``ToolCallStarted(id, name)`` / ``ToolArgumentsDelta(id, text)``: a tool call being written;
  its arguments are JSON only once complete, and the loop runs the call only after the model's
  response is whole (``ModelResponse``), never from the deltas;
- ``UsageReport(usage)``: tokens, when the provider reports them before the end;
- ``Restart(reason)``: what was streamed so far is discarded (a retry or a fallback after the
  first token); the answer starts again, and the user must be shown that it did;
- ``ToolRunning(id, name)`` / ``ToolDone(id, name, is_error)``: the loop's own progress while it
  runs the tools of a response (emitted by the loop, not the model);
- ``TurnDone(text)``: the turn's final reply, exactly the text the session log records.

A sink may raise ``StreamCancelled`` to stop the turn (see there).

The ``ModelResponse`` a streaming call returns is the one ``complete`` would have returned:
session logs, facts, handoff and usage are written from it, never from the deltas, so a streamed
run records the same as one that was not streamed.

A model streams when it has ``stream(request, sink)`` (``StreamingModel``); ``complete_streaming``
calls it, or falls back to ``complete`` and reports the whole text as one delta.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol, runtime_checkable

from specwire.runtime.core.lazy_dataclass import lazy_dataclass, lazy_methods_dataclass
from specwire.runtime.models.types import Model, ModelRequest, ModelResponse, Usage


@lazy_methods_dataclass(frozen=True)
class TextDelta:
    """Streamed: more of the answer's text."""

    text: str


@lazy_dataclass(frozen=True)
class ToolCallStarted:
    """Streamed: the model started a tool call."""

    id: str
    name: str


@lazy_dataclass(frozen=True)
class ToolArgumentsDelta:
    """Streamed: more of a tool call's JSON arguments."""

    id: str
    text: str


@lazy_dataclass(frozen=True)
class UsageReport:
    """Streamed: the call's token usage."""

    usage: Usage


@lazy_dataclass(frozen=True)
class Restart:
    """Streamed: what was shown so far is discarded (a retry or a fallback starts over)."""

    reason: str


@lazy_dataclass(frozen=True)
class ToolRunning:
    """Streamed: the loop is running a tool."""

    id: str
    name: str


@lazy_dataclass(frozen=True)
class ToolDone:
    """Streamed: a tool finished, and whether it failed."""

    id: str
    name: str
    is_error: bool


@lazy_methods_dataclass(frozen=True)
class TurnDone:
    """Streamed: the turn's final answer."""

    text: str


StreamEvent = (
    TextDelta
    | ToolCallStarted
    | ToolArgumentsDelta
    | UsageReport
    | Restart
    | ToolRunning
    | ToolDone
    | TurnDone
)
StreamSink = Callable[[StreamEvent], None]


class StreamCancelled(Exception):  # noqa: N818 - a signal, not an error
    """Raised by a sink (a client went away, Ctrl-C) to stop the turn being streamed.

    The model call stops, no tool of an unfinished response runs, and the loop ends the turn as
    cancelled: the session log stays whole (the turn is recorded once, as cancelled, with the
    usage of what was generated) and nothing is captured from the unfinished answer.
    """


@runtime_checkable
class StreamingModel(Model, Protocol):
    def stream(self, request: ModelRequest, sink: StreamSink) -> ModelResponse:
        """Like ``complete``, reporting the response to ``sink`` as it is written."""
        ...


def complete_streaming(
    model: Model, request: ModelRequest, sink: StreamSink | None
) -> ModelResponse:
    """One model call, streamed to ``sink`` when there is one."""
    if sink is None:
        return model.complete(request)
    if isinstance(model, StreamingModel):
        return model.stream(request, sink)
    response = model.complete(request)
    if response.text:
        sink(TextDelta(response.text))
    return response
