"""Local fakes of the model providers' streaming wire formats, for tests and benches.

``serve_stream("anthropic" | "openai", [StreamReply(...), ...])`` starts a real HTTP server on
127.0.0.1 (a context manager yielding a ``FakeStreamProvider``): point the official SDK at
``fake.url`` (``ANTHROPIC_BASE_URL=fake.url``, ``OPENAI_BASE_URL=fake.url + "/v1"``) and each
POST takes the next scripted reply (the last one repeats) and streams it:

- ``anthropic``: Messages API server-sent events (``message_start``, ``content_block_start``,
  ``ping``, ``content_block_delta`` with ``text_delta`` / ``input_json_delta``,
  ``content_block_stop``, ``message_delta`` with the usage, ``message_stop``);
- ``openai``: chat-completions chunks (``data: {...}``: a role chunk, ``delta.content`` pieces,
  ``delta.tool_calls`` whose first piece names the call and the rest carry its arguments, a
  ``finish_reason`` chunk, a usage chunk when ``stream_options.include_usage``, then
  ``data: [DONE]``). A request without ``stream: true`` gets the whole completion as JSON.

The text is sent word by word (each word with the spaces after it) and a tool call's arguments
in ``argument_piece``-character pieces, one event every ``interval`` seconds: a fixed rate.
Every token sent is timed (``time.monotonic()``, comparable across processes on one machine):
``StreamRecord.first_token_at`` / ``last_token_at``. ``hold_last`` (a ``threading.Event``) makes
the server wait before the last text token until the test sets it, so "the first words showed
before the last token was sent" is checked without timing anything.

Failures: ``status`` answers an HTTP error before any stream (``error_body`` as the body);
``fail_after=n`` sends a provider error event after ``n`` deltas; ``cut_after=n`` closes the
connection after ``n`` deltas without ending the stream.

Run as a program (``python -m tests.support.fake_streams openai --text "…" --interval 0.02``)
it serves that one reply until killed, printing its URL on the first line.
"""

from __future__ import annotations

import argparse
import json
import re
import socket
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal

Body = dict[str, Any]
WireFormat = Literal["anthropic", "openai"]
_WORD = re.compile(r"\s*\S+\s*|\s+")


@dataclass(frozen=True)
class FakeToolCall:
    name: str
    arguments: Body | str  # a str is sent as is (to send arguments that are not valid JSON)
    id: str = ""  # default: toolu_fake<N> (anthropic) or call_fake<N> (openai)


@dataclass
class StreamReply:
    text: str = ""
    tool_calls: list[FakeToolCall] = field(default_factory=list)
    interval: float = 0.0  # seconds between two events
    first_delay: float = 0.0  # seconds before the first token (after the stream's head)
    argument_piece: int = 8  # characters of a tool call's arguments per delta
    input_tokens: int = 25
    output_tokens: int | None = None  # default: one per text word and argument piece
    cached_tokens: int = 0
    hold_last: threading.Event | None = None
    fail_after: int | None = None
    error_kind: str = "overloaded_error"  # anthropic type or openai "type" of the error event
    error_message: str = "Overloaded"
    cut_after: int | None = None
    status: int = 200
    error_body: Body | None = None
    refusal: bool = False  # anthropic stop_reason refusal / openai finish_reason content_filter
    # openai: every tool call's chunks carry ``index: 0``, as Ollama and some proxies send them
    # (ollama/ollama#15457); the calls differ only by their ids.
    reused_index: bool = False
    # The output token limit ended the response (anthropic stop_reason max_tokens / openai
    # finish_reason length): with a tool call whose arguments string stops mid-JSON.
    cut_by_limit: bool = False


@dataclass
class StreamRecord:
    """One request and what was sent back."""

    path: str
    headers: dict[str, str]
    body: Body
    deltas_sent: int = 0
    first_token_at: float | None = None
    last_token_at: float | None = None
    finished: bool = False  # the stream's end (message_stop / [DONE]) was sent
    disconnected: bool = False  # the client went away before the end


def words(text: str) -> list[str]:
    """``text`` in word pieces (leading and trailing spaces kept) that join back to it."""
    return _WORD.findall(text)


class _Gone(Exception):
    """The client closed the connection."""


class FakeStreamProvider:
    def __init__(self, wire: WireFormat, replies: list[StreamReply]) -> None:
        if not replies:
            raise ValueError("FakeStreamProvider needs at least one reply")
        self.wire = wire
        self.replies = list(replies)
        self.records: list[StreamRecord] = []
        self._lock = threading.Lock()
        provider = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # quiet
                return

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                headers = {k.lower(): v for k, v in self.headers.items()}
                record = StreamRecord(self.path, headers, body)
                reply = provider._take(record)
                try:
                    provider._answer(self, reply, record)
                except (_Gone, OSError):
                    record.disconnected = not record.finished
                self.close_connection = True

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        host, port = self.server.server_address[:2]
        self.url = f"http://{host!s}:{port}"

    # -- bookkeeping ---------------------------------------------------------------------------

    def _take(self, record: StreamRecord) -> StreamReply:
        with self._lock:
            self.records.append(record)
            return self.replies.pop(0) if len(self.replies) > 1 else self.replies[0]

    def bodies(self) -> list[Body]:
        return [record.body for record in self.records]

    # -- answering -----------------------------------------------------------------------------

    def _answer(
        self, handler: BaseHTTPRequestHandler, reply: StreamReply, rec: StreamRecord
    ) -> None:
        if reply.status != 200:
            _send_json(handler, reply.status, reply.error_body or _error_body(self.wire, reply))
            return
        if not rec.body.get("stream"):
            whole = (
                _openai_completion(reply) if self.wire == "openai" else _anthropic_message(reply)
            )
            rec.finished = True  # before the write: the client may look once it has the body
            try:
                _send_json(handler, 200, whole)
            except OSError:
                rec.finished = False
                raise
            return
        handler.send_response(200)
        handler.send_header("content-type", "text/event-stream")
        handler.send_header("cache-control", "no-cache")
        handler.send_header("transfer-encoding", "chunked")  # as the providers send it
        handler.end_headers()
        writer = _EventWriter(self.wire, handler, reply, rec)
        if self.wire == "anthropic":
            _stream_anthropic(writer, reply)
        else:
            include_usage = bool((rec.body.get("stream_options") or {}).get("include_usage"))
            _stream_openai(writer, reply, include_usage)
        writer.end()


class _EventWriter:
    """Writes SSE frames, counts and times the deltas, and applies the reply's failures."""

    def __init__(
        self,
        wire: WireFormat,
        handler: BaseHTTPRequestHandler,
        reply: StreamReply,
        rec: StreamRecord,
    ) -> None:
        self.wire = wire
        self.cut_off = False
        self.handler = handler
        self.reply = reply
        self.record = rec
        self.failed = False

    def frame(self, data: Body | str, event: str | None = None) -> None:
        text = data if isinstance(data, str) else json.dumps(data)
        head = f"event: {event}\n" if event else ""
        self._chunk(f"{head}data: {text}\n\n".encode())

    def end(self) -> None:
        """The last chunk of the body: a stream cut on purpose never gets it."""
        if not self.cut_off:
            self._chunk(b"")

    def _chunk(self, payload: bytes) -> None:
        try:
            self.handler.wfile.write(b"%x\r\n%s\r\n" % (len(payload), payload))
            self.handler.wfile.flush()
        except OSError as exc:
            raise _Gone from exc

    def delta(self, data: Body, event: str | None = None, *, last_text: bool = False) -> bool:
        """Send one delta at the fixed rate; False when the reply's failure stopped the stream."""
        reply, record = self.reply, self.record
        if reply.fail_after is not None and record.deltas_sent >= reply.fail_after:
            self.fail()
            return False
        if reply.cut_after is not None and record.deltas_sent >= reply.cut_after:
            self.cut()
            return False
        if record.deltas_sent == 0 and reply.first_delay:
            time.sleep(reply.first_delay)
        elif reply.interval:
            time.sleep(reply.interval)
        if last_text and reply.hold_last is not None:
            reply.hold_last.wait(timeout=60)
        # Counted before the write: a client that has read the frame must already see it counted.
        now = time.monotonic()
        first_before = record.first_token_at
        record.first_token_at = first_before or now
        record.last_token_at = now
        record.deltas_sent += 1
        try:
            self.frame(data, event)
        except _Gone:
            record.deltas_sent -= 1
            record.first_token_at = first_before
            raise
        return True

    def finish(self, data: Body | str, event: str | None = None) -> None:
        """Send the last frame, marked finished first: a client may look once it has read it."""
        self.record.finished = True
        try:
            self.frame(data, event)
        except _Gone:
            self.record.finished = False
            raise

    def fail(self) -> None:
        self.failed = True  # the server ends the stream on purpose: finished, not disconnected
        self.finish(
            _error_body(self.wire, self.reply), "error" if self.wire == "anthropic" else None
        )

    def cut(self) -> None:
        """Close the connection in the middle of the body (the chunked stream never ends)."""
        self.failed = True
        self.cut_off = True
        self.record.finished = True
        with suppress(OSError):
            self.handler.connection.shutdown(socket.SHUT_RDWR)


def _send_json(handler: BaseHTTPRequestHandler, status: int, payload: Body) -> None:
    data = json.dumps(payload).encode()
    handler.send_response(status)
    handler.send_header("content-type", "application/json")
    handler.send_header("content-length", str(len(data)))
    # The SDKs honour retry-after-ms, so retries in tests wait a millisecond, not seconds.
    handler.send_header("retry-after-ms", "1")
    handler.end_headers()
    handler.wfile.write(data)


def _error_body(wire: WireFormat, reply: StreamReply) -> Body:
    if wire == "anthropic":
        error = {"type": reply.error_kind, "message": reply.error_message}
        return {"type": "error", "error": error}
    return {"error": {"message": reply.error_message, "type": reply.error_kind, "code": None}}


def _pieces(text: str, size: int) -> list[str]:
    size = max(1, size)
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


def _arguments_text(call: FakeToolCall) -> str:
    return call.arguments if isinstance(call.arguments, str) else json.dumps(call.arguments)


def _output_tokens(reply: StreamReply) -> int:
    if reply.output_tokens is not None:
        return reply.output_tokens
    pieces = len(words(reply.text))
    pieces += sum(len(_pieces(_arguments_text(c), reply.argument_piece)) for c in reply.tool_calls)
    return pieces


# -- Anthropic Messages SSE -----------------------------------------------------------------------


def _stream_anthropic(out: _EventWriter, reply: StreamReply) -> None:
    usage = {
        "input_tokens": reply.input_tokens,
        "output_tokens": 1,
        "cache_read_input_tokens": reply.cached_tokens,
        "cache_creation_input_tokens": 0,
    }
    message = {
        "id": "msg_fake_stream",
        "type": "message",
        "role": "assistant",
        "model": str(out.record.body.get("model", "fake")),
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": usage,
    }
    out.frame({"type": "message_start", "message": message}, "message_start")
    index = 0
    text_pieces = words(reply.text)
    if text_pieces:
        block = {"type": "text", "text": ""}
        start = {"type": "content_block_start", "index": index, "content_block": block}
        out.frame(start, "content_block_start")
        out.frame({"type": "ping"}, "ping")
        for n, piece in enumerate(text_pieces):
            delta = {"type": "text_delta", "text": piece}
            event = {"type": "content_block_delta", "index": index, "delta": delta}
            if not out.delta(event, "content_block_delta", last_text=n == len(text_pieces) - 1):
                return
        out.frame({"type": "content_block_stop", "index": index}, "content_block_stop")
        index += 1
    for number, call in enumerate(reply.tool_calls, start=1):
        block = {"type": "tool_use", "id": call.id or f"toolu_fake{number}", "name": call.name}
        block["input"] = {}
        out.frame(
            {"type": "content_block_start", "index": index, "content_block": block},
            "content_block_start",
        )
        for piece in _pieces(_arguments_text(call), reply.argument_piece):
            delta = {"type": "input_json_delta", "partial_json": piece}
            event = {"type": "content_block_delta", "index": index, "delta": delta}
            if not out.delta(event, "content_block_delta"):
                return
        out.frame({"type": "content_block_stop", "index": index}, "content_block_stop")
        index += 1
    stop = "refusal" if reply.refusal else ("tool_use" if reply.tool_calls else "end_turn")
    stop = "max_tokens" if reply.cut_by_limit else stop
    out.frame(
        {
            "type": "message_delta",
            "delta": {"stop_reason": stop, "stop_sequence": None},
            "usage": {"output_tokens": _output_tokens(reply)},
        },
        "message_delta",
    )
    out.finish({"type": "message_stop"}, "message_stop")


def _anthropic_message(reply: StreamReply) -> Body:
    content: list[Body] = [{"type": "text", "text": reply.text}] if reply.text else []
    for number, call in enumerate(reply.tool_calls, start=1):
        arguments = call.arguments if isinstance(call.arguments, dict) else {}
        identifier = call.id or f"toolu_fake{number}"
        content.append(
            {"type": "tool_use", "id": identifier, "name": call.name, "input": arguments}
        )
    return {
        "id": "msg_fake",
        "type": "message",
        "role": "assistant",
        "model": "fake",
        "content": content,
        "stop_reason": "tool_use" if reply.tool_calls else "end_turn",
        "stop_sequence": None,
        "usage": {
            "input_tokens": reply.input_tokens,
            "output_tokens": _output_tokens(reply),
            "cache_read_input_tokens": reply.cached_tokens,
        },
    }


# -- OpenAI chat-completions SSE ------------------------------------------------------------------


def _chunk(model: str, choices: list[Body], usage: Body | None = None) -> Body:
    chunk: Body = {
        "id": "chatcmpl-fake-stream",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": model,
        "choices": choices,
    }
    if usage is not None:
        chunk["usage"] = usage
    return chunk


def _openai_usage(reply: StreamReply) -> Body:
    output = _output_tokens(reply)
    return {
        "prompt_tokens": reply.input_tokens,
        "completion_tokens": output,
        "total_tokens": reply.input_tokens + output,
        "prompt_tokens_details": {"cached_tokens": reply.cached_tokens},
    }


def _stream_openai(out: _EventWriter, reply: StreamReply, include_usage: bool) -> None:
    model = str(out.record.body.get("model", "fake"))

    def choice(delta: Body, finish: str | None = None) -> list[Body]:
        return [{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}]

    out.frame(_chunk(model, choice({"role": "assistant", "content": ""})))
    text_pieces = words(reply.text)
    for n, piece in enumerate(text_pieces):
        last = n == len(text_pieces) - 1
        if not out.delta(_chunk(model, choice({"content": piece})), last_text=last):
            return
    for number, call in enumerate(reply.tool_calls):
        index = 0 if reply.reused_index else number
        head = {
            "index": index,
            "id": call.id or f"call_fake{number + 1}",
            "type": "function",
            "function": {"name": call.name, "arguments": ""},
        }
        out.frame(_chunk(model, choice({"tool_calls": [head]})))
        for piece in _pieces(_arguments_text(call), reply.argument_piece):
            part = {"index": index, "function": {"arguments": piece}}
            if not out.delta(_chunk(model, choice({"tool_calls": [part]}))):
                return
    finish = "content_filter" if reply.refusal else ("tool_calls" if reply.tool_calls else "stop")
    finish = "length" if reply.cut_by_limit else finish
    out.frame(_chunk(model, choice({}, finish)))
    if include_usage:
        out.frame(_chunk(model, [], _openai_usage(reply)))
    out.finish("[DONE]")


def _openai_completion(reply: StreamReply) -> Body:
    message: Body = {"role": "assistant", "content": reply.text or None}
    if reply.tool_calls:
        message["tool_calls"] = [
            {
                "id": call.id or f"call_fake{n + 1}",
                "type": "function",
                "function": {"name": call.name, "arguments": _arguments_text(call)},
            }
            for n, call in enumerate(reply.tool_calls)
        ]
    finish = "tool_calls" if reply.tool_calls else "stop"
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": 0,
        "model": "fake",
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": _openai_usage(reply),
    }


# -- running it ------------------------------------------------------------------------------------


@contextmanager
def serve_stream(wire: WireFormat, replies: list[StreamReply]) -> Iterator[FakeStreamProvider]:
    provider = FakeStreamProvider(wire, replies)
    thread = threading.Thread(target=provider.server.serve_forever, args=(0.01,), daemon=True)
    thread.start()
    try:
        yield provider
    finally:
        for reply in provider.replies:
            if reply.hold_last is not None:
                reply.hold_last.set()  # never leave a handler thread waiting
        provider.server.shutdown()
        provider.server.server_close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("wire", choices=["anthropic", "openai"])
    parser.add_argument("--text", default="This is a streamed answer from the fake provider.")
    parser.add_argument("--interval", type=float, default=0.02, help="seconds between tokens")
    parser.add_argument("--first-delay", type=float, default=0.0)
    args = parser.parse_args(argv)
    reply = StreamReply(text=args.text, interval=args.interval, first_delay=args.first_delay)
    with serve_stream(args.wire, [reply]) as fake:
        print(fake.url, flush=True)
        try:
            threading.Event().wait()
        except KeyboardInterrupt:
            return 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
