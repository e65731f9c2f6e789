"""The real adapters, each over its official SDK, against a fake provider on 127.0.0.1."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import pytest
from fake_provider import (
    Reply,
    anthropic_error,
    anthropic_message,
    openai_completion,
    openai_error,
    serve,
)

from specwire.runtime.models.anthropic_model import AnthropicModel
from specwire.runtime.models.errors import (
    ContextTooLongError,
    ModelAuthError,
    ModelConfigError,
    ModelConnectionError,
    ModelNotFoundError,
    ModelRateLimitError,
    ModelRefusalError,
    ModelServerError,
    ModelTimeoutError,
    ModelUnavailableError,
)
from specwire.runtime.models.openai_model import OpenAIModel
from specwire.runtime.models.select import provider_of, select_model
from specwire.runtime.models.types import (
    AssistantMessage,
    Model,
    ModelRequest,
    SystemBlock,
    ToolCall,
    ToolResultMessage,
    ToolSpec,
    Usage,
    UserMessage,
)

ECHO = ToolSpec(
    "Echo",
    "Echo the text back.",
    {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
)
# The loop's order: instructions, recalled memory, handoff, continuity tail, skills.
SYSTEM = [
    SystemBlock("instructions", "You are terse."),
    SystemBlock("recalled_memory", "The user likes tea."),
    SystemBlock("handoff", "Last time: drafted the memo."),
    SystemBlock("continuity_tail", "Plan: 1. [open] ship"),
    SystemBlock("skills", "Skill: summarize."),
]
CALL_A = ToolCall("tu_00000000000000aa", "Echo", {"text": "a"})
CALL_B = ToolCall("tu_00000000000000bb", "Echo", {"text": "b"})
SECOND_ROUND = [
    UserMessage("echo a and b"),
    AssistantMessage("On it.", (CALL_A, CALL_B)),
    ToolResultMessage(CALL_A.id, "Echo", "a"),
    ToolResultMessage(CALL_B.id, "Echo", "no such thing", is_error=True),
]


def fast(**extra: str) -> dict[str, str]:
    return {"SPECWIRE_MODEL_MAX_RETRIES": "2", "SPECWIRE_MODEL_TIMEOUT": "5", **extra}


def anthropic(url: str, **extra: str) -> Model:
    return select_model(
        "claude-sonnet-4-6",
        environ=fast(ANTHROPIC_API_KEY="k-test", ANTHROPIC_BASE_URL=url, **extra),
    )


def openai(url: str, model_id: str = "openai/gpt-test", **extra: str) -> Model:
    return select_model(
        model_id, environ=fast(OPENAI_API_KEY="k-test", OPENAI_BASE_URL=url, **extra)
    )


# -- the id grammar --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("model_id", "expected"),
    [
        ("anthropic/claude-opus-4", ("anthropic", "claude-opus-4")),
        ("claude-sonnet-4-6", ("anthropic", "claude-sonnet-4-6")),
        ("openai/gpt-4o", ("openai", "gpt-4o")),
        ("gpt-4o-mini", ("openai", "gpt-4o-mini")),
        ("o3-mini", ("openai", "o3-mini")),
        ("o1", ("openai", "o1")),
        ("openai-compatible/llama3.1:8b", ("openai-compatible", "llama3.1:8b")),
        ("ollama/llama3", None),
        ("openai/", None),
        ("omega", None),
        ("mistral-large", None),
    ],
)
def test_the_id_grammar(model_id: str, expected: tuple[str, str] | None) -> None:
    assert provider_of(model_id) == expected


def test_selection_builds_the_right_adapter() -> None:
    env = {"ANTHROPIC_API_KEY": "a", "OPENAI_API_KEY": "o"}
    assert isinstance(select_model("anthropic/claude-x", environ=env), AnthropicModel)
    assert isinstance(select_model("o4-mini", environ=env), OpenAIModel)
    compatible = select_model(
        "openai-compatible/qwen", environ={"OPENAI_BASE_URL": "http://127.0.0.1:9/v1"}
    )
    assert isinstance(compatible, OpenAIModel) and compatible.model_id == "openai-compatible/qwen"
    with pytest.raises(ModelUnavailableError):
        select_model("ollama/llama3", environ=env)


@pytest.mark.parametrize(
    ("model_id", "env", "needle"),
    [
        ("claude-sonnet-4-6", {}, "ANTHROPIC_API_KEY"),
        ("anthropic/claude-x", {"OPENAI_API_KEY": "o"}, "ANTHROPIC_API_KEY"),
        ("gpt-4o", {"ANTHROPIC_API_KEY": "a"}, "OPENAI_API_KEY"),
        ("openai-compatible/m", {"OPENAI_API_KEY": "o"}, "OPENAI_BASE_URL"),
    ],
)
def test_missing_settings_are_one_line_start_up_errors(
    model_id: str, env: dict[str, str], needle: str
) -> None:
    with pytest.raises(ModelConfigError) as caught:
        select_model(model_id, environ=env)
    message = str(caught.value)
    assert needle in message and f'"{model_id}"' in message and "\n" not in message


@pytest.mark.parametrize(("sdk", "model_id"), [("anthropic", "claude-x"), ("openai", "gpt-x")])
def test_a_missing_sdk_names_the_extra(
    monkeypatch: pytest.MonkeyPatch, sdk: str, model_id: str
) -> None:
    monkeypatch.setitem(sys.modules, sdk, None)  # import raises ImportError
    with pytest.raises(ModelConfigError, match=rf'pip install "specwire\[{sdk}\]"'):
        select_model(model_id, environ={"ANTHROPIC_API_KEY": "a", "OPENAI_API_KEY": "o"})


def test_importing_the_runtime_does_not_import_the_sdks() -> None:
    code = (
        "import sys, specwire.runtime, specwire.runtime.models, specwire.runtime.models.select\n"
        "import specwire.runtime.hosts.console\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('anthropic', 'openai')))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


# -- Anthropic -------------------------------------------------------------------------------


def test_anthropic_tool_round_trip() -> None:
    first = anthropic_message(
        [
            {"type": "text", "text": "On it."},
            {"type": "tool_use", "id": "toolu_01A", "name": "Echo", "input": {"text": "a"}},
            {"type": "tool_use", "id": "toolu_01B", "name": "Echo", "input": {"text": "b"}},
        ],
        stop_reason="tool_use",
        usage={
            "input_tokens": 7,
            "output_tokens": 20,
            "cache_read_input_tokens": 100,
            "cache_creation_input_tokens": 3,
        },
    )
    final = anthropic_message([{"type": "text", "text": "a, and b failed"}])
    with serve([Reply(first), Reply(final)]) as fake:
        model = anthropic(fake.url)
        response = model.complete(ModelRequest(SYSTEM, [UserMessage("echo a and b")], [ECHO]))
        assert response.text == "On it."
        assert [(c.id, c.name, c.input) for c in response.tool_calls] == [
            ("toolu_01A", "Echo", {"text": "a"}),
            ("toolu_01B", "Echo", {"text": "b"}),
        ]
        assert response.usage == Usage(input=110, output=20, cached=100)
        answer = model.complete(ModelRequest(SYSTEM, SECOND_ROUND, [ECHO]))
        assert answer.text == "a, and b failed" and answer.tool_calls == []
    first_body, second_body = fake.bodies()
    assert fake.requests[0].path == "/v1/messages"
    headers = fake.requests[0].headers  # the SDK sends the key as x-api-key or a bearer token
    assert "k-test" in (headers.get("x-api-key"), headers.get("authorization", "")[7:])
    assert first_body["model"] == "claude-sonnet-4-6" and first_body["max_tokens"] > 0
    # Stable blocks first, the cache breakpoint on the last of them, then the volatile ones.
    assert first_body["system"] == [
        {"type": "text", "text": "You are terse."},
        {"type": "text", "text": "Skill: summarize.", "cache_control": {"type": "ephemeral"}},
        {"type": "text", "text": "The user likes tea."},
        {"type": "text", "text": "Last time: drafted the memo."},
        {"type": "text", "text": "Plan: 1. [open] ship"},
    ]
    assert first_body["tools"] == [
        {"name": "Echo", "description": ECHO.description, "input_schema": ECHO.input_schema}
    ]
    assert first_body["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "echo a and b"}]}
    ]
    # The loop's ids go out in both the tool_use and the tool_result blocks, in order.
    assert second_body["messages"][1:] == [
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "On it."},
                {"type": "tool_use", "id": CALL_A.id, "name": "Echo", "input": {"text": "a"}},
                {"type": "tool_use", "id": CALL_B.id, "name": "Echo", "input": {"text": "b"}},
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": CALL_A.id, "content": "a"},
                {
                    "type": "tool_result",
                    "tool_use_id": CALL_B.id,
                    "content": "no such thing",
                    "is_error": True,
                },
            ],
        },
    ]


def test_anthropic_complete_marks_a_tool_call_cut_off_at_the_output_limit() -> None:
    # Review R2: the streamed path marked a cut-off call malformed; complete() (the dream's
    # model phase, whose output cap the budget sets) ran the incomplete input.
    cut = anthropic_message(
        [
            {"type": "tool_use", "id": "toolu_01A", "name": "Echo", "input": {"text": "a"}},
            {"type": "tool_use", "id": "toolu_01B", "name": "Echo", "input": {}},
        ],
        stop_reason="max_tokens",
    )
    with serve([Reply(cut)]) as fake:
        response = anthropic(fake.url).complete(ModelRequest(SYSTEM, [UserMessage("hi")], [ECHO]))
    first, last = response.tool_calls
    assert first.input == {"text": "a"} and not first.malformed
    assert "cut off at the output token limit" in last.malformed


def test_anthropic_refusal_and_context_errors_are_one_line() -> None:
    refusal = anthropic_message([], stop_reason="refusal")
    too_long = anthropic_error(
        "invalid_request_error", "prompt is too long: 250000 tokens > 200000 maximum"
    )
    with serve([Reply(refusal), Reply(too_long, status=400)]) as fake:
        model = anthropic(fake.url)
        request = ModelRequest(SYSTEM, [UserMessage("hi")], [])
        with pytest.raises(ModelRefusalError, match="refused"):
            model.complete(request)
        with pytest.raises(ContextTooLongError, match="too long"):
            model.complete(request)


# -- OpenAI ----------------------------------------------------------------------------------


def test_openai_tool_round_trip() -> None:
    first = openai_completion(
        "On it.", [("call_1", "Echo", {"text": "a"}), ("call_2", "Echo", {"text": "b"})]
    )
    final = openai_completion("a, and b failed")
    with serve([Reply(first), Reply(final)]) as fake:
        model = openai(fake.url + "/v1")
        response = model.complete(ModelRequest(SYSTEM, [UserMessage("echo a and b")], [ECHO]))
        assert [(c.id, c.name, c.input) for c in response.tool_calls] == [
            ("call_1", "Echo", {"text": "a"}),
            ("call_2", "Echo", {"text": "b"}),
        ]
        assert response.usage == Usage(input=12, output=3, cached=4)
        answer = model.complete(ModelRequest(SYSTEM, SECOND_ROUND, [ECHO]))
        assert answer.text == "a, and b failed"
    first_body, second_body = fake.bodies()
    assert fake.requests[0].path == "/v1/chat/completions"
    assert fake.requests[0].headers["authorization"] == "Bearer k-test"
    assert first_body["model"] == "gpt-test"
    assert first_body["messages"] == [
        {
            "role": "system",
            "content": "You are terse.\n\nSkill: summarize.\n\nThe user likes tea.\n\n"
            "Last time: drafted the memo.\n\nPlan: 1. [open] ship",
        },
        {"role": "user", "content": "echo a and b"},
    ]
    assert first_body["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "Echo",
                "description": ECHO.description,
                "parameters": ECHO.input_schema,
            },
        }
    ]
    assert second_body["messages"][2:] == [
        {
            "role": "assistant",
            "content": "On it.",
            "tool_calls": [
                {
                    "id": CALL_A.id,
                    "type": "function",
                    "function": {"name": "Echo", "arguments": '{"text": "a"}'},
                },
                {
                    "id": CALL_B.id,
                    "type": "function",
                    "function": {"name": "Echo", "arguments": '{"text": "b"}'},
                },
            ],
        },
        {"role": "tool", "tool_call_id": CALL_A.id, "content": "a"},
        {"role": "tool", "tool_call_id": CALL_B.id, "content": "ERROR: no such thing"},
    ]


def test_openai_compatible_needs_no_key_and_errors_are_one_line() -> None:
    refusal = openai_completion(None)
    refusal["choices"][0]["message"]["refusal"] = "I can't help with that."
    too_long = openai_error(
        "This model's maximum context length is 8192 tokens.", "context_length_exceeded"
    )
    unknown = openai_error("The model `nope` does not exist", "model_not_found")
    replies = [Reply(refusal), Reply(too_long, status=400), Reply(unknown, status=404)]
    with serve(replies) as fake:
        model = select_model(
            "openai-compatible/nope", environ=fast(OPENAI_BASE_URL=fake.url + "/v1")
        )
        request = ModelRequest(SYSTEM, [UserMessage("hi")], [])
        with pytest.raises(ModelRefusalError, match="I can't help with that"):
            model.complete(request)
        with pytest.raises(ContextTooLongError, match="context"):
            model.complete(request)
        with pytest.raises(ModelNotFoundError, match="does not know this model"):
            model.complete(request)
    assert fake.requests[0].headers["authorization"] == "Bearer no-key"


# -- retries, server errors, timeouts --------------------------------------------------------

PROVIDERS: dict[str, tuple[Any, Any, Any]] = {
    "anthropic": (
        anthropic,
        anthropic_message([{"type": "text", "text": "ok"}]),
        lambda status: anthropic_error("api_error", f"failure {status}"),
    ),
    "openai": (
        lambda url, **extra: openai(url + "/v1", **extra),
        openai_completion("ok"),
        lambda status: openai_error(f"failure {status}"),
    ),
}


@pytest.mark.parametrize("provider", sorted(PROVIDERS))
def test_a_429_is_retried_then_succeeds(provider: str) -> None:
    make, ok, error = PROVIDERS[provider]
    with serve([Reply(error(429), status=429), Reply(ok)]) as fake:
        response = make(fake.url).complete(ModelRequest(SYSTEM, [UserMessage("hi")], []))
    assert response.text == "ok"
    assert len(fake.requests) == 2


@pytest.mark.parametrize("provider", sorted(PROVIDERS))
def test_5xx_until_the_retries_run_out_is_a_clear_error(provider: str) -> None:
    make, _, error = PROVIDERS[provider]
    with serve([Reply(error(503), status=503)]) as fake:
        model = make(fake.url, SPECWIRE_MODEL_MAX_RETRIES="1")
        with pytest.raises(ModelServerError) as caught:
            model.complete(ModelRequest(SYSTEM, [UserMessage("hi")], []))
    assert len(fake.requests) == 2
    message = str(caught.value)
    assert "503" in message and "after 2 attempt(s)" in message and "\n" not in message


@pytest.mark.parametrize("provider", sorted(PROVIDERS))
def test_a_persistent_429_and_a_rejected_key_are_clear_errors(provider: str) -> None:
    make, _, error = PROVIDERS[provider]
    request = ModelRequest(SYSTEM, [UserMessage("hi")], [])
    with (
        serve([Reply(error(429), status=429)]) as fake,
        pytest.raises(ModelRateLimitError, match="rate limited"),
    ):
        make(fake.url, SPECWIRE_MODEL_MAX_RETRIES="0").complete(request)
    with (
        serve([Reply(error(401), status=401)]) as fake,
        pytest.raises(ModelAuthError, match="rejected the API key"),
    ):
        make(fake.url).complete(request)
    assert len(fake.requests) == 1  # a 401 is not retried


@pytest.mark.parametrize("provider", sorted(PROVIDERS))
def test_a_timeout_is_a_clear_error(provider: str) -> None:
    make, ok, _ = PROVIDERS[provider]
    with serve([Reply(ok, delay=2.0)]) as fake:
        model = make(fake.url, SPECWIRE_MODEL_TIMEOUT="0.2", SPECWIRE_MODEL_MAX_RETRIES="0")
        with pytest.raises(ModelTimeoutError) as caught:
            model.complete(ModelRequest(SYSTEM, [UserMessage("hi")], []))
    assert "did not answer in time" in str(caught.value)
    assert "SPECWIRE_MODEL_TIMEOUT" in str(caught.value)


def test_bad_settings_are_start_up_errors() -> None:
    with pytest.raises(ModelConfigError, match="SPECWIRE_MODEL_TIMEOUT must be"):
        select_model("gpt-x", environ={"OPENAI_API_KEY": "o", "SPECWIRE_MODEL_TIMEOUT": "soon"})


@pytest.mark.parametrize("provider", sorted(PROVIDERS))
def test_an_unreachable_provider_is_a_clear_error(provider: str) -> None:
    make, _, _ = PROVIDERS[provider]
    with serve([Reply({})]) as fake:
        url = fake.url  # the port is free again once the server has closed
    model = make(url, SPECWIRE_MODEL_MAX_RETRIES="0", SPECWIRE_MODEL_TIMEOUT="2")
    with pytest.raises(ModelConnectionError, match="cannot reach the provider"):
        model.complete(ModelRequest(SYSTEM, [UserMessage("hi")], []))
