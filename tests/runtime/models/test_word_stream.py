"""The scripted and replay models stream word by word; the per-word delay is an env knob."""

from __future__ import annotations

import pytest

from specwire.runtime.models.errors import ModelConfigError
from specwire.runtime.models.select import select_model
from specwire.runtime.models.streaming import StreamEvent, TextDelta, ToolArgumentsDelta
from specwire.runtime.models.types import ModelRequest, ToolSpec, UserMessage
from specwire.runtime.models.word_stream import WORD_DELAY_ENV, word_delay_setting

LS = ToolSpec("ls", "list", {"type": "object"})


def test_the_scripted_model_streams_its_answer_word_by_word() -> None:
    model = select_model("scripted", environ={WORD_DELAY_ENV: "0.001"})
    request = ModelRequest([], [UserMessage("one two three")], [])
    events: list[StreamEvent] = []
    response = model.stream(request, events.append)  # type: ignore[attr-defined]
    assert [e.text for e in events if isinstance(e, TextDelta)] == [
        "Noted: ",
        "one ",
        "two ",
        "three.",
    ]
    assert response == model.complete(request)


def test_a_streamed_tool_call_input_joins_back_to_its_json() -> None:
    model = select_model("scripted", environ={})
    request = ModelRequest([], [UserMessage('call ls {"path": "a/long/enough/folder/name"}')], [LS])
    events: list[StreamEvent] = []
    response = model.stream(request, events.append)  # type: ignore[attr-defined]
    pieces = [e.text for e in events if isinstance(e, ToolArgumentsDelta)]
    assert len(pieces) > 1
    assert "".join(pieces) == '{"path": "a/long/enough/folder/name"}'
    assert response.tool_calls[0].input == {"path": "a/long/enough/folder/name"}


@pytest.mark.parametrize("raw", ["soon", "-1", "61"])
def test_a_bad_word_delay_is_one_clear_error(raw: str) -> None:
    with pytest.raises(ModelConfigError, match=WORD_DELAY_ENV):
        word_delay_setting({WORD_DELAY_ENV: raw})
