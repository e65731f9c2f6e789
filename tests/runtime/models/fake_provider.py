"""A fake model provider on 127.0.0.1 speaking the Anthropic or OpenAI wire format.

Each POST takes the next scripted ``Reply`` (the last one repeats) and records the request, so a
test points the official SDK at ``url`` and asserts what went over the wire.
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
                data = json.dumps(payload).encode()
                try:
                    self.send_response(reply.status)
                    self.send_header("content-type", "application/json")
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
