"""The Anthropic and OpenAI adapters stream through the official SDKs against local fakes of each
provider's streaming wire format: deltas as they come, the same response ``complete`` gives,
errors mapped (mid-stream too), and a fallback after the first token announced as a restart."""

from __future__ import annotations

import json
from importlib.util import find_spec
from pathlib import Path
from typing import Any

import pytest

from specwire.runtime.models.errors import (
    ModelAuthError,
    ModelConnectionError,
    ModelRefusalError,
    ModelServerError,
)
from specwire.runtime.models.fallback import FallbackModel
from specwire.runtime.models.streaming import (
    Restart,
    StreamEvent,
    TextDelta,
    ToolArgumentsDelta,
    ToolCallStarted,
    UsageReport,
)
from specwire.runtime.models.types import (
    AssistantMessage,
    Model,
    ModelRequest,
    SystemBlock,
    ToolCall,
    ToolResultMessage,
    ToolSpec,
    UserMessage,
)
from tests.support.fake_streams import FakeToolCall, StreamReply, WireFormat, serve_stream

pytestmark = pytest.mark.skipif(
    find_spec("anthropic") is None or find_spec("openai") is None,
    reason="the anthropic and openai SDKs are not installed",
)

WIRES: list[WireFormat] = ["anthropic", "openai"]
LONG = " ".join(f"word{n}" for n in range(40)) + "."
READ = ToolSpec("read", "read a file", {"type": "object", "properties": {"path": {}}})
REQUEST = ModelRequest([], [UserMessage("hello")], [READ])


def adapter(wire: WireFormat, url: str) -> Model:
    from specwire.runtime.models.anthropic_model import AnthropicModel
    from specwire.runtime.models.openai_model import OpenAIModel

    retries = {"SPECWIRE_MODEL_MAX_RETRIES": "0"}
    if wire == "anthropic":
        env = {"ANTHROPIC_API_KEY": "k", "ANTHROPIC_BASE_URL": url, **retries}
        return AnthropicModel("anthropic/fake", "fake", environ=env)
    env = {"OPENAI_API_KEY": "k", "OPENAI_BASE_URL": url + "/v1", **retries}
    return OpenAIModel("openai/fake", "fake", environ=env)


def streamed(model: Model, request: ModelRequest = REQUEST) -> tuple[Any, list[StreamEvent]]:
    events: list[StreamEvent] = []
    response = model.stream(request, events.append)  # type: ignore[attr-defined]
    return response, events


@pytest.mark.parametrize("wire", WIRES)
def test_a_long_answer_arrives_in_many_deltas_and_equals_the_unstreamed_one(
    wire: WireFormat,
) -> None:
    reply = StreamReply(text=LONG, input_tokens=30, output_tokens=41, cached_tokens=4)
    with serve_stream(wire, [reply]) as fake:
        model = adapter(wire, fake.url)
        response, events = streamed(model)
        whole = model.complete(REQUEST)
    texts = [e.text for e in events if isinstance(e, TextDelta)]
    assert len(texts) >= 10
    assert "".join(texts) == LONG
    assert response.text == whole.text == LONG
    assert response.tool_calls == whole.tool_calls == []
    assert response.usage == whole.usage and response.usage is not None
    assert response.usage.output == 41 and response.usage.cached == 4
    assert isinstance([e for e in events if not isinstance(e, TextDelta)][-1], UsageReport)
    if wire == "openai":
        assert fake.bodies()[0]["stream_options"] == {"include_usage": True}


def test_openai_sends_exactly_the_body_the_adapter_built_streamed_or_whole() -> None:
    """The payload reaches the SDK as ``extra_body`` (not walked by its transforms): the
    provider still receives exactly the adapter's body, every message kind and the tools, with
    the key."""
    call = ToolCall("tu_00000000000000aa", "read", {"path": "notes.md"})
    request = ModelRequest(
        [SystemBlock("instructions", "Be brief."), SystemBlock("handoff", "Last: the memo.")],
        [
            UserMessage("read my notes"),
            AssistantMessage("Reading.", (call,)),
            ToolResultMessage(call.id, "read", "no such file", is_error=True),
        ],
        [READ],
    )
    with serve_stream("openai", [StreamReply(text="It is missing.")]) as fake:
        model = adapter("openai", fake.url)
        response, _ = streamed(model, request)
        whole = model.complete(request)
    assert response.text == whole.text == "It is missing."
    expected = model.body(request)  # type: ignore[attr-defined]
    streamed_body, whole_body = fake.bodies()
    assert streamed_body == {**expected, "stream": True, "stream_options": {"include_usage": True}}
    assert whole_body == expected
    assert [record.headers["authorization"] for record in fake.records] == ["Bearer k"] * 2


@pytest.mark.parametrize("wire", WIRES)
def test_tool_arguments_in_pieces_become_one_complete_call(wire: WireFormat) -> None:
    arguments = {"path": "docs/a/rather/long/path/to/notes.txt"}
    call = FakeToolCall("read", arguments)
    reply = StreamReply(text="Let me look.", tool_calls=[call], argument_piece=4)
    with serve_stream(wire, [reply]) as fake:
        response, events = streamed(adapter(wire, fake.url))
    started = [e for e in events if isinstance(e, ToolCallStarted)]
    pieces = [e for e in events if isinstance(e, ToolArgumentsDelta)]
    assert [(e.name) for e in started] == ["read"]
    assert len(pieces) > 5 and {p.id for p in pieces} == {started[0].id}
    assert json.loads("".join(p.text for p in pieces)) == arguments
    [call] = response.tool_calls
    assert (call.id, call.name, call.input) == (started[0].id, "read", arguments)
    assert response.text == "Let me look."


@pytest.mark.parametrize("wire", WIRES)
def test_a_tool_call_cut_off_by_the_output_limit_is_marked_not_run_on_empty_input(
    wire: WireFormat,
) -> None:
    call = FakeToolCall("read", '{"path": "docs/a/rather/lo')
    reply = StreamReply(tool_calls=[call], argument_piece=4, cut_by_limit=True)
    with serve_stream(wire, [reply]) as fake:
        response, _ = streamed(adapter(wire, fake.url))
    [made] = response.tool_calls
    assert made.name == "read" and made.input == {}
    assert "cut off at the output token limit" in made.malformed


@pytest.mark.parametrize("wire", WIRES)
def test_tool_arguments_that_are_not_an_object_are_marked_not_run(wire: WireFormat) -> None:
    reply = StreamReply(tool_calls=[FakeToolCall("read", "[1, 2]")])
    with serve_stream(wire, [reply]) as fake:
        response, _ = streamed(adapter(wire, fake.url))
    [made] = response.tool_calls
    assert made.input == {} and "not a JSON object" in made.malformed


@pytest.mark.parametrize("reused_index", [False, True])
def test_parallel_openai_tool_calls_stay_apart_even_when_a_server_numbers_them_all_0(
    reused_index: bool,
) -> None:
    # Ollama (and some proxies) stream every parallel call at index 0, told apart only by
    # their ids (ollama/ollama#15457): merged by index, the first call would run with the
    # arguments of both (invalid JSON, so {}) and the second would be lost.
    calls = [
        FakeToolCall("read", {"path": "docs/first.txt"}, id="call_a"),
        FakeToolCall("read", {"path": "docs/second.txt"}, id="call_b"),
    ]
    reply = StreamReply(tool_calls=calls, argument_piece=5, reused_index=reused_index)
    with serve_stream("openai", [reply]) as fake:
        response, events = streamed(adapter("openai", fake.url))
    assert [(c.id, c.name, c.input) for c in response.tool_calls] == [
        ("call_a", "read", {"path": "docs/first.txt"}),
        ("call_b", "read", {"path": "docs/second.txt"}),
    ]
    started = [e.id for e in events if isinstance(e, ToolCallStarted)]
    assert started == ["call_a", "call_b"]
    for call in response.tool_calls:
        pieces = [e.text for e in events if isinstance(e, ToolArgumentsDelta) and e.id == call.id]
        assert json.loads("".join(pieces)) == call.input


@pytest.mark.parametrize("wire", WIRES)
def test_an_error_event_mid_stream_is_a_retryable_server_error(wire: WireFormat) -> None:
    with serve_stream(wire, [StreamReply(text=LONG, fail_after=3)]) as fake:
        events: list[StreamEvent] = []
        with pytest.raises(ModelServerError, match="Overloaded"):
            adapter(wire, fake.url).stream(REQUEST, events.append)  # type: ignore[attr-defined]
    assert len([e for e in events if isinstance(e, TextDelta)]) == 3


@pytest.mark.parametrize("wire", WIRES)
def test_a_stream_cut_before_its_end_is_a_retryable_connection_error(wire: WireFormat) -> None:
    call = FakeToolCall("read", {"path": "notes.txt"})
    reply = StreamReply(text="one two", tool_calls=[call], argument_piece=3, cut_after=4)
    with serve_stream(wire, [reply]) as fake, pytest.raises(ModelConnectionError) as caught:
        streamed(adapter(wire, fake.url))
    assert caught.value.retryable


@pytest.mark.parametrize("wire", WIRES)
def test_errors_before_the_stream_map_as_complete_maps_them(wire: WireFormat) -> None:
    reply = StreamReply(status=401, error_kind="authentication_error", error_message="bad key")
    with serve_stream(wire, [reply]) as fake, pytest.raises(ModelAuthError, match="bad key"):
        streamed(adapter(wire, fake.url))


@pytest.mark.parametrize("wire", WIRES)
def test_a_streamed_refusal_is_a_refusal(wire: WireFormat) -> None:
    reply = StreamReply(text="I will not", refusal=True)
    with serve_stream(wire, [reply]) as fake, pytest.raises(ModelRefusalError):
        streamed(adapter(wire, fake.url))


def test_a_fallback_after_the_first_token_restarts_the_answer_on_the_next_model() -> None:
    lines: list[str] = []
    failing = StreamReply(text="Partial answer that breaks", fail_after=2)
    with (
        serve_stream("anthropic", [failing]) as first,
        serve_stream("openai", [StreamReply(text="The whole answer.")]) as second,
    ):
        model = FallbackModel(
            [adapter("anthropic", first.url), adapter("openai", second.url)], lines.append
        )
        response, events = streamed(model)
    restarts = [i for i, e in enumerate(events) if isinstance(e, Restart)]
    assert len(restarts) == 1
    before = [e.text for e in events[: restarts[0]] if isinstance(e, TextDelta)]
    after = [e.text for e in events[restarts[0] :] if isinstance(e, TextDelta)]
    assert before == ["Partial ", "answer "]
    assert "".join(after) == response.text == "The whole answer."
    assert "openai/fake" in events[restarts[0]].reason  # type: ignore[union-attr]
    assert lines == [
        "[model] anthropic/fake failed (server error or overloaded); falling back to openai/fake\n"
    ]
    assert model.model_id == "openai/fake"


def test_a_fallback_before_the_first_token_is_silent_as_today() -> None:
    lines: list[str] = []
    with (
        serve_stream("openai", [StreamReply(status=503, error_message="down")]) as first,
        serve_stream("anthropic", [StreamReply(text="Fine.")]) as second,
    ):
        model = FallbackModel(
            [adapter("openai", first.url), adapter("anthropic", second.url)], lines.append
        )
        response, events = streamed(model)
    assert not any(isinstance(e, Restart) for e in events)
    assert response.text == "Fine."
    assert len(lines) == 1 and "falling back to anthropic/fake" in lines[0]


def test_a_tool_call_streamed_in_pieces_runs_once_with_the_complete_arguments(
    tmp_path: Path,
) -> None:
    from specwire.runtime.core.ids import new_session_id
    from specwire.runtime.loop.chat import run_chat_loop
    from specwire.runtime.sessions.log import SessionLog, read_events
    from specwire.runtime.tools.builtin import builtin_catalog

    (tmp_path / "notes.txt").write_text("the secret word is heron\n", encoding="utf-8")
    call = FakeToolCall("read", {"path": "notes.txt"})
    replies = [
        StreamReply(tool_calls=[call], argument_piece=2),
        StreamReply(text="The note says heron."),
    ]
    out: list[str] = []
    events: list[StreamEvent] = []
    with serve_stream("openai", replies) as fake:
        log = SessionLog(tmp_path / "sessions", new_session_id())
        run_chat_loop(
            model=adapter("openai", fake.url),
            instructions="i",
            catalog=builtin_catalog(("read",), tmp_path),
            session_log=log,
            inputs=["what does the note say?"],
            output=out.append,
            stream=events.append,
        )
    assert len([e for e in events if isinstance(e, ToolArgumentsDelta)]) >= 5
    logged = list(read_events(log.path))
    uses = [e.payload for e in logged if e.type == "tool_use"]
    assert [(u["name"], u["input"]) for u in uses] == [("read", {"path": "notes.txt"})]
    [result] = [e.payload for e in logged if e.type == "tool_result"]
    assert "heron" in result["text"] and result.get("isError") is not True
    assert out == ["The note says heron."]
    sent = fake.bodies()[1]["messages"]
    assert json.loads(sent[-2]["tool_calls"][0]["function"]["arguments"]) == {"path": "notes.txt"}


def test_a_request_s_answer_cap_reaches_each_wire() -> None:
    """``ModelRequest.max_output_tokens`` (the dream's budget cap): Anthropic sends the lower of
    it and its own limit, OpenAI ``max_completion_tokens``, a compatible server ``max_tokens``;
    a request without one sends what it sent before."""
    from specwire.runtime.models.anthropic_model import AnthropicModel
    from specwire.runtime.models.openai_model import OpenAIModel

    capped = ModelRequest([], [UserMessage("hello")], [READ], max_output_tokens=123)
    anthropic = AnthropicModel("anthropic/fake", "fake", environ={"ANTHROPIC_API_KEY": "k"})
    assert anthropic.body(capped)["max_tokens"] == 123
    assert anthropic.body(REQUEST)["max_tokens"] == 4096
    openai = OpenAIModel("openai/fake", "fake", environ={"OPENAI_API_KEY": "k"})
    assert openai.body(capped)["max_completion_tokens"] == 123
    assert "max_completion_tokens" not in openai.body(REQUEST)
    compatible = OpenAIModel(
        "openai-compatible/fake",
        "fake",
        compatible=True,
        environ={"OPENAI_BASE_URL": "http://127.0.0.1:9/v1"},
    )
    body = compatible.body(capped)
    assert body["max_tokens"] == 123 and "max_completion_tokens" not in body
