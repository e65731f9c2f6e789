"""A fake model provider on 127.0.0.1 speaking the Anthropic or OpenAI wire format.

Each POST takes the next scripted ``Reply`` (the last one repeats) and records the request, so a
test points the official SDK at ``url`` and asserts what went over the wire. A request asking
for a stream (``"stream": true``) gets the same reply as that provider's event stream, in one
piece per content block (``tests/support/fake_streams.py`` streams word by word at a rate).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Body = dict[str, Any]


@dataclass
class Reply:
    body: Body | Callable[[Body], Body] = field(default_factory=dict)
    status: int = 200
    delay: float = 0.0
    # The SDKs honour retry-after-ms, so retries in tests wait a millisecond, not seconds.
    headers: dict[str, str] = field(default_factory=lambda: {"retry-after-ms": "1"})


@dataclass
class Recorded:
    path: str
    headers: dict[str, str]
    body: Body


class FakeProvider:
    def __init__(self, replies: list[Reply]) -> None:
        self.replies = list(replies)
        self.requests: list[Recorded] = []
        self._lock = threading.Lock()
        provider = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:  # quiet
                return

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                reply = provider._take(
                    Recorded(self.path, {k.lower(): v for k, v in self.headers.items()}, body)
                )
                if reply.delay:
                    time.sleep(reply.delay)
                payload = reply.body(body) if callable(reply.body) else reply.body
                streamed = reply.status == 200 and body.get("stream") is True
                data = as_event_stream(payload) if streamed else json.dumps(payload).encode()
                try:
                    self.send_response(reply.status)
                    kind = "text/event-stream" if streamed else "application/json"
                    self.send_header("content-type", kind)
                    self.send_header("content-length", str(len(data)))
                    for key, value in reply.headers.items():
                        self.send_header(key, value)
                    self.end_headers()
                    self.wfile.write(data)
                except OSError:
                    pass  # the client gave up (a timeout test)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        host, port = self.server.server_address[:2]
        self.url = f"http://{host!s}:{port}"

    def _take(self, recorded: Recorded) -> Reply:
        with self._lock:
            self.requests.append(recorded)
            return self.replies.pop(0) if len(self.replies) > 1 else self.replies[0]

    def bodies(self) -> list[Body]:
        return [r.body for r in self.requests]


def as_event_stream(payload: Body) -> bytes:
    """``payload`` (an Anthropic message or an OpenAI chat completion) as its event stream."""
    if payload.get("type") == "message":
        events = _anthropic_events(payload)
        return b"".join(
            f"event: {event['type']}\ndata: {json.dumps(event)}\n\n".encode() for event in events
        )
    chunks = _openai_chunks(payload)
    lines = [f"data: {json.dumps(chunk)}\n\n" for chunk in chunks] + ["data: [DONE]\n\n"]
    return "".join(lines).encode()


def _anthropic_events(message: Body) -> list[Body]:
    usage = dict(message.get("usage") or {})
    start = {**message, "content": [], "stop_reason": None, "usage": {**usage, "output_tokens": 0}}
    events: list[Body] = [{"type": "message_start", "message": start}]
    for index, block in enumerate(message.get("content") or []):
        if block.get("type") == "tool_use":
            opened = {**block, "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        else:
            opened = {"type": "text", "text": ""}
            delta = {"type": "text_delta", "text": block.get("text", "")}
        events += [
            {"type": "content_block_start", "index": index, "content_block": opened},
            {"type": "content_block_delta", "index": index, "delta": delta},
            {"type": "content_block_stop", "index": index},
        ]
    events += [
        {
            "type": "message_delta",
            "delta": {"stop_reason": message.get("stop_reason"), "stop_sequence": None},
            "usage": {"output_tokens": usage.get("output_tokens", 0)},
        },
        {"type": "message_stop"},
    ]
    return events


def _openai_chunks(completion: Body) -> list[Body]:
    head = {key: completion[key] for key in ("id", "created", "model") if key in completion}
    head["object"] = "chat.completion.chunk"
    chunks: list[Body] = []
    for choice in completion.get("choices") or []:
        message = choice.get("message") or {}
        delta: Body = {"role": "assistant", "content": message.get("content")}
        if message.get("refusal"):
            delta["refusal"] = message["refusal"]
        if message.get("tool_calls"):
            delta["tool_calls"] = [
                {"index": index, **call} for index, call in enumerate(message["tool_calls"])
            ]
        chunks.append({**head, "choices": [{"index": choice.get("index", 0), "delta": delta}]})
        chunks.append(
            {
                **head,
                "choices": [
                    {
                        "index": choice.get("index", 0),
                        "delta": {},
                        "finish_reason": choice.get("finish_reason"),
                    }
                ],
            }
        )
    if completion.get("usage") is not None:
        chunks.append({**head, "choices": [], "usage": completion["usage"]})
    return chunks


@contextmanager
def serve(replies: list[Reply]) -> Iterator[FakeProvider]:
    provider = FakeProvider(replies)
    thread = threading.Thread(target=provider.server.serve_forever, args=(0.01,), daemon=True)
    thread.start()
    try:
        yield provider
    finally:
        provider.server.shutdown()
        provider.server.server_close()


def anthropic_message(
    content: list[Body], *, stop_reason: str = "end_turn", usage: Body | None = None
) -> Body:
    return {
        "id": "msg_fake",
        "type": "message",
        "role": "assistant",
        "model": "fake",
        "content": content,
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": usage or {"input_tokens": 10, "output_tokens": 5},
    }


def anthropic_error(kind: str, message: str) -> Body:
    return {"type": "error", "error": {"type": kind, "message": message}}


def openai_completion(
    text: str | None = None,
    tool_calls: list[tuple[str, str, Body]] | None = None,
    *,
    finish_reason: str | None = None,
    usage: Body | None = None,
) -> Body:
    message: Body = {"role": "assistant", "content": text}
    if tool_calls:
        message["tool_calls"] = [
            {"id": cid, "type": "function", "function": {"name": n, "arguments": json.dumps(a)}}
            for cid, n, a in tool_calls
        ]
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": 0,
        "model": "fake",
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": finish_reason or ("tool_calls" if tool_calls else "stop"),
            }
        ],
        "usage": usage
        or {
            "prompt_tokens": 12,
            "completion_tokens": 3,
            "total_tokens": 15,
            "prompt_tokens_details": {"cached_tokens": 4},
        },
    }


def openai_error(message: str, code: str | None = None) -> Body:
    return {"error": {"message": message, "type": "invalid_request_error", "code": code}}
