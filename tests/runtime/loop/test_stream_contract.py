"""The loop reports a streamed turn to its sink and records exactly what it records unstreamed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from specwire.runtime.models.streaming import (
    StreamEvent,
    TextDelta,
    ToolDone,
    ToolRunning,
    TurnDone,
    complete_streaming,
)
from specwire.runtime.models.types import ModelRequest, ModelResponse, ToolCall


class TwoStepModel:
    """Asks for one ls call, then answers."""

    model_id = "two-step"

    def __init__(self) -> None:
        self.calls = 0

    def complete(self, request: ModelRequest) -> ModelResponse:
        self.calls += 1
        if self.calls == 1:
            return ModelResponse(tool_calls=[ToolCall("tu_0000000000000001", "ls", {})])
        return ModelResponse(text="there are files")


def test_a_model_without_stream_reports_its_whole_text_once() -> None:
    events: list[StreamEvent] = []
    model = TwoStepModel()
    model.calls = 1
    response = complete_streaming(model, ModelRequest([], [], []), events.append)
    assert response.text == "there are files"
    assert events == [TextDelta("there are files")]


def test_the_loop_streams_tool_progress_and_the_final_reply(tmp_path: Path) -> None:
    from loop_support import events as logged

    from specwire.runtime.core.ids import new_session_id
    from specwire.runtime.loop.chat import run_chat_loop
    from specwire.runtime.sessions.log import SessionLog
    from specwire.runtime.tools.builtin import builtin_catalog

    def run(stream: Any) -> tuple[list[str], list[dict[str, Any]]]:
        out: list[str] = []
        root = tmp_path / ("streamed" if stream else "plain")
        root.mkdir()
        log = SessionLog(root / "sessions", new_session_id())
        run_chat_loop(
            model=TwoStepModel(),
            instructions="i",
            catalog=builtin_catalog(("ls",), root),
            session_log=log,
            inputs=["what is here?"],
            output=out.append,
            stream=stream,
        )
        return out, [
            {"type": kind, "payload": payload}
            for kind, payload in logged(log)
            if kind not in ("session_start", "session_end")
        ]

    streamed: list[StreamEvent] = []
    out_streamed, log_streamed = run(streamed.append)
    out_plain, log_plain = run(None)
    assert out_streamed == out_plain == ["there are files"]
    assert [type(event) for event in streamed] == [ToolRunning, ToolDone, TextDelta, TurnDone]
    assert streamed[-1] == TurnDone("there are files")
    assert [event["type"] for event in log_streamed] == [event["type"] for event in log_plain]
    replies = [e["payload"]["text"] for e in log_streamed if e["type"] == "assistant_message"]
    assert replies == ["there are files"]
