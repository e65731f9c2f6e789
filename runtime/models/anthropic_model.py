"""The Anthropic Messages API through the official ``anthropic`` SDK (imported lazily).

System blocks go stable first (instructions, skills) with ``cache_control: ephemeral`` on the
last stable one, then the volatile ones. Tool calls keep the loop's ``tu_…`` ids on the wire:
the API accepts any id matching ``[a-zA-Z0-9_-]+`` as long as each ``tool_result`` names a
``tool_use`` of the previous assistant turn, so the ids in the session log are the ids sent.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from specwire.runtime.models.errors import ModelError, ModelRefusalError
from specwire.runtime.models.provider import (
    broken_stream,
    cache_order,
    capped_max_tokens,
    load_sdk,
    malformed_tool_call,
    map_sdk_error,
    map_stream_error,
    max_tokens_setting,
    parsed_tool_call,
    require_env,
    retries_setting,
    timeout_setting,
)
from specwire.runtime.models.stream_reading import guarded
from specwire.runtime.models.streaming import (
    StreamSink,
    TextDelta,
    ToolArgumentsDelta,
    ToolCallStarted,
    UsageReport,
)
from specwire.runtime.models.types import (
    AssistantMessage,
    Message,
    ModelRequest,
    ModelResponse,
    ToolCall,
    ToolResultMessage,
    Usage,
)

KEY_ENV = "ANTHROPIC_API_KEY"
BASE_URL_ENV = "ANTHROPIC_BASE_URL"
EPHEMERAL = {"type": "ephemeral"}


def system_payload(request: ModelRequest) -> list[dict[str, Any]]:
    stable, volatile = cache_order(request.system)
    blocks: list[dict[str, Any]] = [{"type": "text", "text": b.text} for b in stable]
    if blocks:
        blocks[-1]["cache_control"] = dict(EPHEMERAL)
    blocks += [{"type": "text", "text": b.text} for b in volatile]
    return blocks


def tools_payload(request: ModelRequest) -> list[dict[str, Any]]:
    return [
        {"name": t.name, "description": t.description, "input_schema": t.input_schema}
        for t in request.tools
    ]


def messages_payload(messages: list[Message]) -> list[dict[str, Any]]:
    """Our messages as alternating user/assistant turns (tool results ride in a user turn)."""
    out: list[dict[str, Any]] = []

    def add(role: str, blocks: list[dict[str, Any]]) -> None:
        if out and out[-1]["role"] == role:
            out[-1]["content"].extend(blocks)
        else:
            out.append({"role": role, "content": blocks})

    for message in messages:
        if isinstance(message, AssistantMessage):
            blocks: list[dict[str, Any]] = []
            if message.text:
                blocks.append({"type": "text", "text": message.text})
            blocks += [
                {"type": "tool_use", "id": c.id, "name": c.name, "input": c.input}
                for c in message.tool_calls
            ]
            add("assistant", blocks or [{"type": "text", "text": "(no answer)"}])
        elif isinstance(message, ToolResultMessage):
            result: dict[str, Any] = {
                "type": "tool_result",
                "tool_use_id": message.tool_use_id,
                "content": message.text or "(no output)",
            }
            if message.is_error:
                result["is_error"] = True
            add("user", [result])
        else:
            add("user", [{"type": "text", "text": message.text or "(empty message)"}])
    return out


class AnthropicModel:
    """A ``Model`` over ``client.messages.create``."""

    def __init__(
        self,
        model_id: str,
        wire_model: str,
        *,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        env = os.environ if environ is None else environ
        self._model_id = model_id
        self._wire_model = wire_model
        self._sdk = load_sdk("anthropic")
        key = require_env(env, KEY_ENV, model_id)
        self._retries = retries_setting(env)
        self._max_tokens = max_tokens_setting(env)
        base_url = env.get(BASE_URL_ENV, "").strip() or None
        self._client = self._sdk.Anthropic(
            api_key=key,
            base_url=base_url,
            timeout=timeout_setting(env),
            max_retries=self._retries,
        )

    @property
    def model_id(self) -> str:
        return self._model_id

    def body(self, request: ModelRequest) -> dict[str, Any]:
        """The ``messages.create`` arguments for ``request``."""
        body: dict[str, Any] = {
            "model": self._wire_model,
            "max_tokens": capped_max_tokens(self._max_tokens, request),
            "system": system_payload(request),
            "messages": messages_payload(request.messages),
        }
        if request.tools:
            body["tools"] = tools_payload(request)
        return body

    def complete(self, request: ModelRequest) -> ModelResponse:
        try:
            reply = self._client.messages.create(**self.body(request))
        except self._sdk.APIError as exc:
            raise map_sdk_error(
                self._sdk, exc, model_id=self._model_id, key_env=KEY_ENV, retries=self._retries
            ) from None
        if reply.stop_reason == "refusal":
            raise self._refusal()
        texts: list[str] = []
        calls: list[ToolCall] = []
        # Only the last block can have been cut off by the output limit.
        last = len(reply.content) - 1
        for at, block in enumerate(reply.content):
            if block.type == "text":
                texts.append(block.text)
            elif block.type == "tool_use":
                cut = reply.stop_reason == "max_tokens" and at == last
                if isinstance(block.input, dict) and not cut:
                    calls.append(ToolCall(block.id, block.name, dict(block.input)))
                else:  # marked, as the stream marks it: answered, never run
                    calls.append(malformed_tool_call(block.id, block.name, cut_off=cut))
        return ModelResponse(text="".join(texts), tool_calls=calls, usage=_usage(reply.usage))

    def stream(self, request: ModelRequest, sink: StreamSink) -> ModelResponse:
        """``messages.create(stream=True)``: the raw events, reported to ``sink`` as they come.

        A tool call's JSON is parsed once its block is complete; the response is built only
        after ``message_stop`` (a stream cut before it is a retryable connection error).
        """
        try:
            events = self._client.messages.create(**self.body(request), stream=True)
        except self._sdk.APIError as exc:
            raise map_sdk_error(
                self._sdk, exc, model_id=self._model_id, key_env=KEY_ENV, retries=self._retries
            ) from None
        state = _StreamState()
        with events:  # closing it on any exit stops the provider generating
            for event in guarded(events, self._stream_error):
                state.feed(event, sink)
                if state.stopped:
                    break
        if not state.stopped:
            raise broken_stream(self._model_id)
        if state.stop_reason == "refusal":
            raise self._refusal()
        return state.response()

    def _stream_error(self, exc: BaseException) -> ModelError | None:
        return map_stream_error(
            self._sdk, exc, model_id=self._model_id, key_env=KEY_ENV, retries=self._retries
        )

    def _refusal(self) -> ModelRefusalError:
        return ModelRefusalError(
            f'model "{self._model_id}" refused to answer this request; rephrase it or '
            "start a new session"
        )


def _usage(usage: Any) -> Usage:
    cached = int(getattr(usage, "cache_read_input_tokens", None) or 0)
    created = int(getattr(usage, "cache_creation_input_tokens", None) or 0)
    total_input = int(getattr(usage, "input_tokens", None) or 0) + cached + created
    return Usage(
        input=total_input, output=int(getattr(usage, "output_tokens", None) or 0), cached=cached
    )


@dataclass
class _Block:
    kind: str
    text: str = ""  # a text block's text, a tool_use block's JSON so far
    id: str = ""
    name: str = ""
    complete: bool = False  # its content_block_stop came


@dataclass
class _StreamState:
    """The Messages API's stream events folded into what ``complete`` returns."""

    blocks: dict[int, _Block] = field(default_factory=dict)
    usage: Usage | None = None
    stop_reason: str | None = None
    stopped: bool = False
    _input: Any = None

    def feed(self, event: Any, sink: StreamSink) -> None:
        kind = getattr(event, "type", "")
        if kind == "message_start":
            self._input = event.message.usage
            self.usage = _usage(self._input)
            sink(UsageReport(self.usage))  # the prompt's tokens, known from the start
        elif kind == "content_block_start":
            block = event.content_block
            if block.type == "tool_use":
                self.blocks[event.index] = _Block("tool_use", id=block.id, name=block.name)
                sink(ToolCallStarted(block.id, block.name))
            else:
                self.blocks[event.index] = _Block(block.type, text=getattr(block, "text", "") or "")
        elif kind == "content_block_delta":
            self._delta(event.index, event.delta, sink)
        elif kind == "content_block_stop":
            if (stopped := self.blocks.get(event.index)) is not None:
                stopped.complete = True
        elif kind == "message_delta":
            self.stop_reason = event.delta.stop_reason
            self.usage = self._final_usage(event.usage)
            sink(UsageReport(self.usage))
        elif kind == "message_stop":
            self.stopped = True

    def _delta(self, index: int, delta: Any, sink: StreamSink) -> None:
        block = self.blocks.get(index)
        if block is None:
            return
        if delta.type == "text_delta" and block.kind == "text" and delta.text:
            block.text += delta.text
            sink(TextDelta(delta.text))
        elif delta.type == "input_json_delta" and block.kind == "tool_use" and delta.partial_json:
            block.text += delta.partial_json
            sink(ToolArgumentsDelta(block.id, delta.partial_json))

    def _final_usage(self, delta_usage: Any) -> Usage:
        """message_delta's counts are cumulative; fields it omits keep message_start's."""
        start = self._input

        def count(name: str) -> int:
            value = getattr(delta_usage, name, None)
            if value is None:
                value = getattr(start, name, None)
            return int(value or 0)

        cached = count("cache_read_input_tokens")
        total_input = count("input_tokens") + cached + count("cache_creation_input_tokens")
        return Usage(input=total_input, output=count("output_tokens"), cached=cached)

    def response(self) -> ModelResponse:
        ordered = [self.blocks[index] for index in sorted(self.blocks)]
        cut = self.stop_reason == "max_tokens"
        calls = [
            parsed_tool_call(block.id, block.name, block.text, cut_off=cut or not block.complete)
            for block in ordered
            if block.kind == "tool_use"
        ]
        text = "".join(block.text for block in ordered if block.kind == "text")
        return ModelResponse(text=text, tool_calls=calls, usage=self.usage)
