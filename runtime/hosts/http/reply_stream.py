"""A streamed turn as the served clients see it: text as it is written, tool progress, restarts.

``ReplyPieces`` turns the loop's ``StreamEvent``s (``runtime.models.streaming``) into what a
person is shown:

- ``TextPiece``: the next text to append. The text a model writes before calling tools is shown
  too, and the next model call's text starts a new paragraph (``\\n\\n``). When the turn ends,
  whatever the final reply holds beyond what was streamed (a note such as "[stopped: …]") is
  sent, so the shown text always ends with the reply the session log records (and equals it
  when the model wrote no text before its tools and never restarted);
- ``ToolPiece``: a tool of the agent starting or finishing;
- ``RestartPiece``: the model started its answer again (a retry or a fallback after the first
  token): text shown since the last tool is void;
- ``ReplyEnd``: the turn's reply is complete.

``TurnStream`` carries those pieces from the thread that runs the turn to the event loop that
writes the response, and stops the turn (``StreamCancelled``, raised from the sink) once the
client is gone.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any, Literal

from specwire.runtime.models.streaming import (
    Restart,
    StreamCancelled,
    StreamEvent,
    TextDelta,
    ToolDone,
    ToolRunning,
    TurnDone,
)

PARAGRAPH = "\n\n"
ToolStatus = Literal["running", "done", "failed"]


@dataclass(frozen=True)
class TextPiece:
    text: str


@dataclass(frozen=True)
class ToolPiece:
    id: str
    name: str
    status: ToolStatus


@dataclass(frozen=True)
class RestartPiece:
    reason: str


@dataclass(frozen=True)
class ReplyEnd:
    pass


Piece = TextPiece | ToolPiece | RestartPiece | ReplyEnd


class ReplyPieces:
    """The pieces of one turn, fed its events in order (not thread-safe: one turn's thread)."""

    def __init__(self) -> None:
        self._segment = ""  # the text the current model call has written so far
        self._shown_text = False
        self._paragraph_due = False

    def feed(self, event: StreamEvent) -> list[Piece]:
        if isinstance(event, TextDelta):
            return [self._text(event.text)]
        if isinstance(event, ToolRunning):
            self._end_segment()
            return [ToolPiece(event.id, event.name, "running")]
        if isinstance(event, ToolDone):
            return [ToolPiece(event.id, event.name, "failed" if event.is_error else "done")]
        if isinstance(event, Restart):
            self._segment = ""
            return [RestartPiece(event.reason)]
        if isinstance(event, TurnDone):
            return [*self._rest_of(event.text), ReplyEnd()]
        return []  # tool-call arguments and usage are the agent's business, not the reader's

    def _text(self, text: str) -> TextPiece:
        shown = PARAGRAPH + text if self._paragraph_due else text
        self._paragraph_due = False
        self._segment += text
        self._shown_text = True
        return TextPiece(shown)

    def _end_segment(self) -> None:
        if self._segment:
            self._paragraph_due = True
        self._segment = ""

    def _rest_of(self, reply: str) -> list[Piece]:
        if reply.startswith(self._segment):
            rest = reply[len(self._segment) :]
        else:  # not what was streamed last: the whole reply, as its own paragraph
            self._end_segment()
            self._paragraph_due = self._shown_text
            rest = reply
        return [self._text(rest)] if rest else []


class TurnStream:
    """The pieces of a turn running in a worker thread, queued for the event loop.

    ``sink`` is the turn's ``StreamSink``; ``cancel()`` (the client went away) makes the sink
    raise ``StreamCancelled`` at the turn's next event, once, and drops every event after it.
    """

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._pieces = ReplyPieces()
        self.queue: asyncio.Queue[Piece] = asyncio.Queue()
        self._cancelled = threading.Event()
        self._stopped = False

    @property
    def cancelled(self) -> bool:
        return self._cancelled.is_set()

    def cancel(self) -> None:
        self._cancelled.set()

    def sink(self, event: StreamEvent) -> None:
        if self._cancelled.is_set():
            if self._stopped or isinstance(event, TurnDone):
                return
            self._stopped = True
            raise StreamCancelled("the client went away")
        for piece in self._pieces.feed(event):
            self._loop.call_soon_threadsafe(self.queue.put_nowait, piece)

    async def pieces_until(
        self, turn: asyncio.Future[Any], keepalive_s: float
    ) -> AsyncIterator[Piece | None]:
        """The pieces as they come, ``None`` after each ``keepalive_s`` without one, until
        ``turn`` (the task running the turn) is over and every piece it queued was taken."""
        getter: asyncio.Task[Piece] | None = None
        try:
            while True:
                if getter is None:
                    getter = asyncio.ensure_future(self.queue.get())
                done, _ = await asyncio.wait(
                    {getter, turn}, timeout=keepalive_s, return_when=asyncio.FIRST_COMPLETED
                )
                if getter in done:
                    piece = getter.result()
                    getter = None
                    yield piece
                elif turn in done:
                    while not self.queue.empty():
                        yield self.queue.get_nowait()
                    return
                else:
                    yield None
        finally:
            if getter is not None:
                getter.cancel()
