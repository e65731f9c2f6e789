"""OpenAI Chat Completions through the official ``openai`` SDK (imported lazily).

With a base URL the same adapter serves OpenAI-compatible servers (Ollama, vLLM, llama.cpp,
LiteLLM). The system blocks become one system message, stable blocks first (the provider's
automatic prefix caching sees the same start every time), volatile ones after. Tool errors go
back as ``role: tool`` messages whose content starts with ``ERROR:`` (the API has no error
field). Tool calls keep the loop's ``tu_…`` ids on the wire: the API accepts any id as long as
each tool message names a call of the assistant message before it.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from specwire.runtime.models.errors import ModelConfigError, ModelError, ModelRefusalError
from specwire.runtime.models.provider import (
    broken_stream,
    cache_order,
    load_sdk,
    map_sdk_error,
    map_stream_error,
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
    ToolResultMessage,
    Usage,
)
from specwire.runtime.safety.redaction import register_secret

KEY_ENV = "OPENAI_API_KEY"
BASE_URL_ENV = "OPENAI_BASE_URL"
ERROR_PREFIX = "ERROR: "
# Local OpenAI-compatible servers usually ignore the key; the SDK still wants one.
NO_KEY = "no-key"


def system_text(request: ModelRequest) -> str:
    stable, volatile = cache_order(request.system)
    return "\n\n".join(block.text for block in [*stable, *volatile])


def tools_payload(request: ModelRequest) -> list[dict[str, Any]]:
    return [
        {
            "type": "function",
            "function": {
                "name": t.name,
                "description": t.description,
                "parameters": t.input_schema,
            },
        }
        for t in request.tools
    ]


def messages_payload(request: ModelRequest) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    system = system_text(request)
    if system:
        out.append({"role": "system", "content": system})
    for message in request.messages:
        out.append(_message(message))
    return out


def _message(message: Message) -> dict[str, Any]:
    if isinstance(message, AssistantMessage):
        entry: dict[str, Any] = {"role": "assistant", "content": message.text or None}
        if message.tool_calls:
            entry["tool_calls"] = [
                {
                    "id": c.id,
                    "type": "function",
                    "function": {"name": c.name, "arguments": json.dumps(c.input)},
                }
                for c in message.tool_calls
            ]
        elif not message.text:
            entry["content"] = ""
        return entry
    if isinstance(message, ToolResultMessage):
        text = message.text or "(no output)"
        return {
            "role": "tool",
            "tool_call_id": message.tool_use_id,
            "content": ERROR_PREFIX + text if message.is_error else text,
        }
    return {"role": "user", "content": message.text}


class OpenAIModel:
    """A ``Model`` over ``client.chat.completions.create``; ``compatible`` needs a base URL."""

    def __init__(
        self,
        model_id: str,
        wire_model: str,
        *,
        compatible: bool = False,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        env = os.environ if environ is None else environ
        self._model_id = model_id
        self._wire_model = wire_model
        self._compatible = compatible
        base_url = env.get(BASE_URL_ENV, "").strip() or None
        if compatible and base_url is None:
            raise ModelConfigError(
                f'model "{model_id}" needs the server\'s URL in {BASE_URL_ENV}, which is not '
                f"set; set e.g. {BASE_URL_ENV}=http://127.0.0.1:11434/v1"
            )
        self._sdk = load_sdk("openai")
        if compatible:
            key = env.get(KEY_ENV, "").strip() or NO_KEY
            if key != NO_KEY:
                register_secret(KEY_ENV, key)
        else:
            key = require_env(env, KEY_ENV, model_id)
        self._retries = retries_setting(env)
        self._client = self._sdk.OpenAI(
            api_key=key,
            base_url=base_url,
            timeout=timeout_setting(env),
            max_retries=self._retries,
        )
        # Done now, not on the first call, which a session's first answer would wait for: the
        # SDK imports the resource (and builds its streaming models) on first access and works
        # out its platform headers on its first request.
        self._completions = self._client.chat.completions
        self._client.default_headers  # noqa: B018 (computed and cached on first access)

    @property
    def model_id(self) -> str:
        return self._model_id

    def body(self, request: ModelRequest) -> dict[str, Any]:
        """The ``chat.completions.create`` arguments for ``request``."""
        body: dict[str, Any] = {
            "model": self._wire_model,
            "messages": messages_payload(request),
        }
        if request.tools:
            body["tools"] = tools_payload(request)
        if request.max_output_tokens is not None:
            # A budget's cap (``ModelRequest.max_output_tokens``); otherwise the server's own
            # limit applies, as before. OpenAI names it ``max_completion_tokens`` (reasoning
            # tokens included); compatible servers still read ``max_tokens``.
            key = "max_tokens" if self._compatible else "max_completion_tokens"
            body[key] = max(1, request.max_output_tokens)
        return body

    def _create(self, request: ModelRequest, **options: Any) -> Any:
        """``chat.completions.create`` sending ``body(request)`` as it is.

        The payload goes as ``extra_body``, which the SDK merges over its own body unexamined
        (``messages`` there replaces the empty placeholder): given as arguments, every message
        and tool schema would be walked against the SDK's TypedDicts on each call, several
        milliseconds before the first byte is sent, to produce the same JSON."""
        payload = self.body(request)
        model = payload.pop("model")
        return self._completions.create(model=model, messages=[], extra_body=payload, **options)

    def complete(self, request: ModelRequest) -> ModelResponse:
        try:
            reply = self._create(request)
        except self._sdk.APIError as exc:
            raise map_sdk_error(
                self._sdk, exc, model_id=self._model_id, key_env=KEY_ENV, retries=self._retries
            ) from None
        if not reply.choices:
            return ModelResponse(usage=_usage(reply))
        choice = reply.choices[0]
        message = choice.message
        refusal = getattr(message, "refusal", None)
        if refusal or choice.finish_reason == "content_filter":
            raise self._refusal(refusal)
        cut_off = choice.finish_reason == "length"
        calls = [
            parsed_tool_call(call.id, call.function.name, call.function.arguments, cut_off=cut_off)
            for call in (message.tool_calls or [])
            if getattr(call, "type", "function") == "function"
        ]
        return ModelResponse(text=message.content or "", tool_calls=calls, usage=_usage(reply))

    def stream(self, request: ModelRequest, sink: StreamSink) -> ModelResponse:
        """``chat.completions.create(stream=True)`` with the usage chunk asked for; a tool
        call's arguments are parsed once the stream has ended with a ``finish_reason``."""
        try:
            chunks = self._create(request, stream=True, stream_options={"include_usage": True})
        except self._sdk.APIError as exc:
            raise map_sdk_error(
                self._sdk, exc, model_id=self._model_id, key_env=KEY_ENV, retries=self._retries
            ) from None
        state = _StreamState()
        with chunks:  # closing it on any exit stops the provider generating
            for chunk in guarded(chunks, self._stream_error):
                state.feed(chunk, sink)
        if state.finish_reason is None:
            raise broken_stream(self._model_id)
        if state.refusal or state.finish_reason == "content_filter":
            raise self._refusal(state.refusal)
        return state.response()

    def _stream_error(self, exc: BaseException) -> ModelError | None:
        return map_stream_error(
            self._sdk, exc, model_id=self._model_id, key_env=KEY_ENV, retries=self._retries
        )

    def _refusal(self, refusal: str | None) -> ModelRefusalError:
        reason = f": {' '.join(str(refusal).split())[:200]}" if refusal else ""
        return ModelRefusalError(
            f'model "{self._model_id}" refused to answer this request{reason}; rephrase it '
            "or start a new session"
        )


@dataclass
class _Call:
    id: str
    name: str = ""
    type: str = "function"
    arguments: str = ""
    announced: bool = False
    id_given: bool = False  # the server named the call (else ``id`` is a placeholder)


@dataclass
class _StreamState:
    """Chat-completion chunks folded into what ``complete`` returns."""

    texts: list[str] = field(default_factory=list)
    # The calls in the order they started. A piece's ``index`` says which call it continues,
    # except that some servers (Ollama, some proxies: ollama/ollama#15457) send every parallel
    # call at index 0: a piece that names a function and an id other than its index's call
    # starts a new call (a call's first piece names both; a server repeating them, or sending
    # ids on later pieces, continues the call it names).
    calls: list[_Call] = field(default_factory=list)
    _at_index: dict[int, _Call] = field(default_factory=dict)
    refusal: str = ""
    finish_reason: str | None = None
    usage: Usage | None = None

    def feed(self, chunk: Any, sink: StreamSink) -> None:
        usage = _usage(chunk)
        if usage is not None:
            self.usage = usage
            sink(UsageReport(usage))
        if not chunk.choices:
            return
        choice = chunk.choices[0]
        delta = choice.delta
        if delta is not None:
            if delta.content:
                self.texts.append(delta.content)
                sink(TextDelta(delta.content))
            if getattr(delta, "refusal", None):
                self.refusal += delta.refusal
            for piece in delta.tool_calls or []:
                self._tool_piece(piece, sink)
        if choice.finish_reason:
            self.finish_reason = choice.finish_reason

    def _tool_piece(self, piece: Any, sink: StreamSink) -> None:
        index = int(piece.index or 0)
        call = self._at_index.get(index)
        function = piece.function
        named = function is not None and bool(function.name)
        if call is None or (named and piece.id and call.id_given and piece.id != call.id):
            call = _Call(id=f"call_{len(self.calls)}")
            self.calls.append(call)
            self._at_index[index] = call
        if piece.id and not call.id_given:
            call.id, call.id_given = piece.id, True
        if getattr(piece, "type", None):
            call.type = piece.type
        if function is not None and function.name and not call.name:
            call.name = function.name  # some servers repeat it in every piece
        arguments = function.arguments if function is not None and function.arguments else ""
        call.arguments += arguments
        if not call.announced and call.name:
            call.announced = True
            sink(ToolCallStarted(call.id, call.name))
            arguments = call.arguments  # what came before the name, too
        if call.announced and arguments:
            sink(ToolArgumentsDelta(call.id, arguments))

    def response(self) -> ModelResponse:
        cut_off = self.finish_reason == "length"
        calls = [
            parsed_tool_call(call.id, call.name, call.arguments, cut_off=cut_off)
            for call in self.calls
            if call.type == "function"
        ]
        return ModelResponse(text="".join(self.texts), tool_calls=calls, usage=self.usage)


def _usage(reply: Any) -> Usage | None:
    usage = getattr(reply, "usage", None)
    if usage is None:
        return None
    details = getattr(usage, "prompt_tokens_details", None)
    cached = int(getattr(details, "cached_tokens", None) or 0) if details is not None else 0
    return Usage(
        input=int(usage.prompt_tokens or 0),
        output=int(usage.completion_tokens or 0),
        cached=cached,
    )
