"""The OpenAI Chat Completions wire format, as much of it as an agent behind it can honour.

The agent's own memory holds the conversation, so a request contributes one thing: its last
message, which must come from the user. Earlier messages, the client's system prompt and
sampling parameters (``temperature``, ``max_tokens``, ``tools`` …) are accepted and ignored —
the spec decides the instructions, the model and the tools.
"""

from __future__ import annotations

import json
import secrets
import time
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from specwire.runtime.hosts.http.common import ClientKey
from specwire.runtime.models import Usage

MAX_MESSAGES = 10_000
MAX_TEXT_CHARS = 100_000


class _Lenient(BaseModel):
    # Strict types (a string is a string); unknown keys are OpenAI features we do not use.
    model_config = ConfigDict(strict=True, extra="ignore")


class ContentPart(_Lenient):
    type: str
    text: str | None = None


class ChatMessage(_Lenient):
    role: Literal["system", "developer", "user", "assistant", "tool", "function"]
    content: str | list[ContentPart] | None = None


class StreamOptions(_Lenient):
    include_usage: bool = False


class ChatCompletionRequest(_Lenient):
    model: str = Field(min_length=1, max_length=200)
    messages: list[ChatMessage] = Field(min_length=1, max_length=MAX_MESSAGES)
    stream: bool = False
    stream_options: StreamOptions | None = None
    user: ClientKey | None = None


def turn_text(request: ChatCompletionRequest) -> str | tuple[str, str]:
    """The user's new message, or ``(message, param)`` saying why there is none."""
    index = len(request.messages) - 1
    last = request.messages[index]
    where = f"messages.{index}"
    if last.role != "user":
        return (f"the last message must come from the user (got role {last.role!r})", where)
    content = last.content
    if isinstance(content, list):
        if any(part.type != "text" or part.text is None for part in content):
            return ("only text content parts are supported", f"{where}.content")
        content = "\n".join(part.text or "" for part in content)
    if not content or not content.strip():
        return ("the last user message is empty", f"{where}.content")
    if len(content) > MAX_TEXT_CHARS:
        return (f"the message is longer than {MAX_TEXT_CHARS} characters", f"{where}.content")
    return content


def error_body(
    message: str, error_type: str, *, code: str | None = None, param: str | None = None
) -> dict[str, Any]:
    return {"error": {"message": message, "type": error_type, "param": param, "code": code}}


def completion_id() -> str:
    return f"chatcmpl-{secrets.token_hex(12)}"


def usage_body(usage: Usage | None) -> dict[str, Any]:
    used = usage or Usage()
    return {
        "prompt_tokens": used.input,
        "completion_tokens": used.output,
        "total_tokens": used.input + used.output,
        "prompt_tokens_details": {"cached_tokens": used.cached},
    }


def completion(cid: str, model: str, text: str, usage: Usage | None) -> dict[str, Any]:
    return {
        "id": cid,
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": text, "refusal": None},
                "finish_reason": "stop",
                "logprobs": None,
            }
        ],
        "usage": usage_body(usage),
    }


def chunk(
    cid: str,
    model: str,
    delta: dict[str, Any],
    finish_reason: str | None = None,
    *,
    usage: Usage | None = None,
    with_usage: bool = False,
) -> dict[str, Any]:
    body: dict[str, Any] = {
        "id": cid,
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason, "logprobs": None}],
    }
    if with_usage:  # the last chunk when the client asked for stream_options.include_usage
        body["choices"] = []
        body["usage"] = usage_body(usage)
    return body


def tool_chunk(cid: str, model: str, call_id: str, name: str, status: str) -> dict[str, Any]:
    """The agent running one of its own tools: an empty delta (a client that knows nothing of
    it reads no content) carrying ``specwire_tool``."""
    body = chunk(cid, model, {})
    body["specwire_tool"] = {"id": call_id, "name": name, "status": status}
    return body


def restart_note(reason: str) -> str:
    """Shown in the content when the model starts its answer again after its first words
    (text already sent cannot be taken back)."""
    return f"\n\n[restarted: {reason}]\n\n"


def sse(data: dict[str, Any] | str) -> bytes:
    text = data if isinstance(data, str) else json.dumps(data, separators=(",", ":"))
    return f"data: {text}\n\n".encode()


def models_list(model_id: str) -> dict[str, Any]:
    return {
        "object": "list",
        "data": [{"id": model_id, "object": "model", "created": 0, "owned_by": "specwire"}],
    }
