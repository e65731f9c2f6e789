"""A stream sink that raises StreamCancelled ends the turn cleanly: recorded once as cancelled,
with the usage of what was generated, no tool of the unfinished response run, nothing captured,
and the session goes on (or, single-turn, stops as cancelled)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from loop_support import events, new_log, payloads

from specwire.runtime.facts.capture import durable_facts
from specwire.runtime.loop.cancelled import CANCELLED_RESULT
from specwire.runtime.loop.chat import LoopResult, run_chat_loop
from specwire.runtime.models.scripted import ScriptedModel
from specwire.runtime.models.streaming import (
    Restart,
    StreamCancelled,
    StreamEvent,
    StreamSink,
    TextDelta,
    ToolRunning,
)
from specwire.runtime.models.types import ModelRequest, ModelResponse, ToolResultMessage
from specwire.runtime.sessions.log import SessionLog, read_events
from specwire.runtime.tools.builtin import builtin_catalog

LONG = "please note " + " ".join(f"item{n}" for n in range(30))


class Recording(ScriptedModel):
    def __init__(self) -> None:
        super().__init__()
        self.requests: list[ModelRequest] = []

    def stream(self, request: ModelRequest, sink: StreamSink) -> ModelResponse:
        self.requests.append(request)
        return super().stream(request, sink)


class CancelAfter:
    """Cancels the first turn at the ``count``-th event of ``kind``; later turns stream on."""

    def __init__(self, kind: type, count: int) -> None:
        self.kind, self.count = kind, count
        self.seen: list[StreamEvent] = []
        self.fired = False

    def __call__(self, event: StreamEvent) -> None:
        self.seen.append(event)
        hits = [e for e in self.seen if isinstance(e, self.kind)]
        if not self.fired and len(hits) == self.count:
            self.fired = True
            raise StreamCancelled


def run(
    tmp_path: Path, model: Any, sink: Any, inputs: list[str], **options: Any
) -> tuple[LoopResult, SessionLog, list[str]]:
    out: list[str] = []
    log = new_log(tmp_path)
    result = run_chat_loop(
        model=model,
        instructions="i",
        catalog=builtin_catalog(("ls",), tmp_path),
        session_log=log,
        inputs=inputs,
        output=out.append,
        stream=sink,
        log=lambda _line: None,
        **options,
    )
    return result, log, out


def test_a_cancel_mid_answer_records_the_turn_once_as_cancelled_and_the_session_goes_on(
    tmp_path: Path,
) -> None:
    sink = CancelAfter(TextDelta, 3)
    result, log, out = run(tmp_path, ScriptedModel(), sink, [LONG, "and then"])
    [first, second] = payloads(log, "assistant_message")
    assert first["cancelled"] is True and first["turn"] == 1
    assert first["text"] == "Noted: please note "
    assert first["usage"]["output"] >= 5 and first["usage"]["input"] > 0
    assert "cancelled" not in second and second["text"] == "Noted: and then."
    assert out == ["Noted: and then."]  # the cancelled answer is not output again
    assert (result.turns, result.cancelled_turns, result.stop_reason) == (1, 1, "exit")
    assert result.usage is not None and result.usage.output > first["usage"]["output"]
    assert [kind for kind, _ in events(log)].count("session_end") == 1


def test_a_single_turn_session_stops_as_cancelled(tmp_path: Path) -> None:
    result, log, out = run(
        tmp_path, ScriptedModel(), CancelAfter(TextDelta, 1), [LONG], single_turn=True
    )
    assert result.stop_reason == "cancelled" and out == []
    assert payloads(log, "session_end") == [{"stopReason": "cancelled", "turns": 0}]


def test_a_cancel_before_a_tool_runs_runs_no_tool_and_keeps_the_conversation_whole(
    tmp_path: Path,
) -> None:
    model = Recording()
    sink = CancelAfter(ToolRunning, 1)
    result, log, _ = run(tmp_path, model, sink, ["call ls {}", "what now?"])
    assert payloads(log, "tool_use") == [] and payloads(log, "tool_result") == []
    [cancelled, answered] = payloads(log, "assistant_message")
    assert cancelled["cancelled"] is True and cancelled["text"] == ""
    assert "usage" in cancelled  # the call that asked for the tool was generated
    assert answered["text"] == "Noted: what now."
    # The unrun call is answered in the conversation, so the next request is a valid one.
    results = [m for m in model.requests[-1].messages if isinstance(m, ToolResultMessage)]
    assert [(r.name, r.text, r.is_error) for r in results] == [("ls", CANCELLED_RESULT, True)]


def test_what_was_streamed_before_a_restart_is_not_recorded(tmp_path: Path) -> None:
    class Restarting:
        model_id = "restarting"

        def complete(self, request: ModelRequest) -> ModelResponse:
            return ModelResponse(text="kept words")

        def stream(self, request: ModelRequest, sink: StreamSink) -> ModelResponse:
            sink(TextDelta("discarded "))
            sink(Restart("the first model failed"))
            sink(TextDelta("kept "))
            sink(TextDelta("words"))
            return self.complete(request)

    result, log, _ = run(tmp_path, Restarting(), CancelAfter(TextDelta, 3), ["hi"])
    [cancelled] = payloads(log, "assistant_message")
    assert cancelled["text"] == "kept words" and cancelled["cancelled"] is True
    assert result.cancelled_turns == 1


def test_nothing_is_captured_from_a_cancelled_answer(tmp_path: Path) -> None:
    _, log, _ = run(tmp_path, ScriptedModel(), CancelAfter(TextDelta, 8), [LONG, "ok"])
    [cancelled, _answered] = payloads(log, "assistant_message")
    assert cancelled["text"].count(" ") >= 5  # enough of an answer to look like a fact
    captured = [fact.text for fact in durable_facts(read_events(log.path))]
    assert not any("item" in text or "please note" in text for text in captured)
