"""The Anthropic Messages API through the official ``anthropic`` SDK (imported lazily).

System blocks go stable first (instructions, skills) with ``cache_control: ephemeral`` on the
last stable one, then the volatile ones. Tool calls keep the loop's ``tu_…`` ids on the wire:
the API accepts any id matching ``[a-zA-Z0-9_-]+`` as long as each ``tool_result`` names a
``tool_use`` of the previous assistant turn, so the ids in the session log are the ids sent.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from specwire.runtime.models.errors import ModelRefusalError
from specwire.runtime.models.provider import (
    cache_order,
    load_sdk,
    map_sdk_error,
    max_tokens_setting,
    require_env,
    retries_setting,
    timeout_setting,
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
            "max_tokens": self._max_tokens,
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
            raise ModelRefusalError(
                f'model "{self._model_id}" refused to answer this request; rephrase it or '
                "start a new session"
            )
        texts: list[str] = []
        calls: list[ToolCall] = []
        for block in reply.content:
            if block.type == "text":
                texts.append(block.text)
            elif block.type == "tool_use":
                tool_input = block.input if isinstance(block.input, dict) else {}
                calls.append(ToolCall(block.id, block.name, dict(tool_input)))
        usage = reply.usage
        cached = int(getattr(usage, "cache_read_input_tokens", None) or 0)
        created = int(getattr(usage, "cache_creation_input_tokens", None) or 0)
        total_input = int(usage.input_tokens or 0) + cached + created
        return ModelResponse(
            text="".join(texts),
            tool_calls=calls,
            usage=Usage(input=total_input, output=int(usage.output_tokens or 0), cached=cached),
        )
