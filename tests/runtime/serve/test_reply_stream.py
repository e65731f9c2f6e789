"""What a served client is shown of a streamed turn (runtime.hosts.http.reply_stream): the text
as written, a paragraph per model call, tool progress, restarts, and a shown text that always
ends with the reply the session log records."""

from __future__ import annotations

import asyncio

import pytest

from specwire.runtime.hosts.http.reply_stream import (
    ReplyEnd,
    ReplyPieces,
    RestartPiece,
    TextPiece,
    ToolPiece,
    TurnStream,
)
from specwire.runtime.models.streaming import (
    Restart,
    StreamCancelled,
    StreamEvent,
    TextDelta,
    ToolArgumentsDelta,
    ToolCallStarted,
    ToolDone,
    ToolRunning,
    TurnDone,
    UsageReport,
)
from specwire.runtime.models.types import Usage


def shown(events: list[StreamEvent]) -> str:
    pieces = ReplyPieces()
    return "".join(
        piece.text
        for event in events
        for piece in pieces.feed(event)
        if isinstance(piece, TextPiece)
    )


def test_words_are_shown_as_written_and_the_turn_ends_once() -> None:
    pieces = ReplyPieces()
    fed = [
        pieces.feed(event)
        for event in (TextDelta("Noted: "), TextDelta("it."), TurnDone("Noted: it."))
    ]
    assert fed == [[TextPiece("Noted: ")], [TextPiece("it.")], [ReplyEnd()]]


def test_tool_calls_show_as_progress_and_their_arguments_stay_hidden() -> None:
    pieces = ReplyPieces()
    events: list[StreamEvent] = [
        ToolCallStarted("t1", "Recall"),
        ToolArgumentsDelta("t1", '{"query": "sec'),
        ToolArgumentsDelta("t1", 'ret"}'),
        UsageReport(Usage(5, 1, 0)),
        ToolRunning("t1", "Recall"),
        ToolDone("t1", "Recall", is_error=True),
    ]
    assert [piece for event in events for piece in pieces.feed(event)] == [
        ToolPiece("t1", "Recall", "running"),
        ToolPiece("t1", "Recall", "failed"),
    ]


def test_text_written_before_tools_is_a_paragraph_of_its_own() -> None:
    events: list[StreamEvent] = [
        TextDelta("Let me look."),
        ToolCallStarted("t1", "ls"),
        ToolRunning("t1", "ls"),
        ToolDone("t1", "ls", is_error=False),
        TextDelta("Three files."),
        TurnDone("Three files."),
    ]
    assert shown(events) == "Let me look.\n\nThree files."


def test_what_the_reply_adds_beyond_the_stream_is_sent_at_the_end() -> None:
    # The tool-round limit appends a note the model never wrote.
    note = "[stopped: the tool-round limit (1) was reached]"
    events: list[StreamEvent] = [
        TextDelta("Still "),
        TextDelta("going"),
        TurnDone(f"Still going\n{note}"),
    ]
    assert shown(events) == f"Still going\n{note}"
    # A deadline answers with a note after a tool round: its own paragraph.
    after_tools: list[StreamEvent] = [
        TextDelta("Checking."),
        ToolRunning("t1", "ls"),
        ToolDone("t1", "ls", is_error=False),
        TurnDone("[stopped: the run's deadline passed]"),
    ]
    assert shown(after_tools) == "Checking.\n\n[stopped: the run's deadline passed]"
    # A reply unlike the streamed text is shown whole.
    assert shown([TextDelta("draft"), TurnDone("other")]) == "draft\n\nother"


def test_a_restart_voids_the_current_call_and_the_stream_still_ends_with_the_reply() -> None:
    pieces = ReplyPieces()
    events: list[StreamEvent] = [
        TextDelta("Half an ans"),
        Restart("the model failed (overloaded); answering with backup"),
        TextDelta("Whole answer."),
        TurnDone("Whole answer."),
    ]
    fed = [piece for event in events for piece in pieces.feed(event)]
    assert fed == [
        TextPiece("Half an ans"),
        RestartPiece("the model failed (overloaded); answering with backup"),
        TextPiece("Whole answer."),
        ReplyEnd(),
    ]


@pytest.mark.parametrize(
    "reply", ["", "a", "one two three", "x\n[stopped: the run's deadline passed]"]
)
def test_the_shown_text_ends_with_the_reply(reply: str) -> None:
    words = reply.split(" ")
    deltas: list[StreamEvent] = [
        TextDelta(word if index == 0 else f" {word}") for index, word in enumerate(words) if word
    ]
    text = shown([*deltas, TurnDone(reply)])
    assert text.endswith(reply) and text == reply


def test_a_cancelled_stream_stops_the_turn_once_and_drops_the_rest() -> None:
    async def run() -> list[object]:
        stream = TurnStream(asyncio.get_running_loop())
        stream.sink(TextDelta("first"))
        stream.cancel()
        with pytest.raises(StreamCancelled):
            stream.sink(TextDelta("second"))
        stream.sink(TextDelta("third"))  # the loop winding down: dropped, not raised again
        stream.sink(TurnDone("first"))
        await asyncio.sleep(0)
        return [stream.queue.get_nowait() for _ in range(stream.queue.qsize())]

    assert asyncio.run(run()) == [TextPiece("first")]


def test_pieces_come_in_order_then_end_with_the_turn() -> None:
    async def run() -> list[object]:
        loop = asyncio.get_running_loop()
        stream = TurnStream(loop)

        def turn() -> str:
            for word in ("a", " b", " c"):
                stream.sink(TextDelta(word))
            stream.sink(TurnDone("a b c"))
            return "done"

        task = asyncio.ensure_future(asyncio.to_thread(turn))
        got = [piece async for piece in stream.pieces_until(task, keepalive_s=60.0)]
        assert task.result() == "done"
        return got

    assert asyncio.run(run()) == [TextPiece("a"), TextPiece(" b"), TextPiece(" c"), ReplyEnd()]


def test_silence_yields_keepalives_until_the_turn_ends() -> None:
    async def run() -> list[object]:
        stream = TurnStream(asyncio.get_running_loop())
        finish = asyncio.Event()

        async def turn() -> None:
            await finish.wait()

        task = asyncio.ensure_future(turn())
        got: list[object] = []
        async for piece in stream.pieces_until(task, keepalive_s=0.01):
            got.append(piece)
            if len(got) == 2:
                finish.set()
        return got

    got = asyncio.run(run())
    assert got[:2] == [None, None] and all(piece is None for piece in got)
