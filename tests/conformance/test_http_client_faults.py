"""``HttpFactProvider`` against a misbehaving server (stdlib ``http.server``, real sockets).

Each request pops the next scripted behaviour: answer, stall past the deadline, drop the
connection mid-body, send an oversized body... The server records what it received, so the
tests can count attempts and check every retry resent the same operationId and body.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from conformance_harness import HANG_GUARD_S, answered

from specwire.runtime.facts.providers.errors import (
    ProviderAuthError,
    ProviderInvalidRequest,
    ProviderProtocolError,
    ProviderScopeError,
    ProviderTimeout,
    ProviderUnavailable,
    ProviderUncertain,
)
from specwire.runtime.facts.providers.http import contract as wire
from specwire.runtime.facts.providers.http.client import HttpFactProvider
from specwire.runtime.facts.providers.protocol import ForgetRequest, RecallRequest, RetainRequest

TOKEN = "s3cret-token-never-shown-0123456789"
Action = Callable[[BaseHTTPRequestHandler], None]
RECALL_OK = {"hits": []}
RETAIN_OK = {"id": "mem_0123456789abcdef", "created": True}


def reply(status: int, payload: Any, headers: dict[str, str] | None = None) -> Action:
    def act(handler: BaseHTTPRequestHandler) -> None:
        raw = json.dumps(payload).encode()
        handler.send_response(status)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(raw)))
        for name, value in (headers or {}).items():
            handler.send_header(name, value)
        handler.end_headers()
        handler.wfile.write(raw)

    return act


def error(status: int, code: str, retryable: bool = False) -> Action:
    return reply(status, {"error": {"code": code, "message": f"{code}!", "retryable": retryable}})


def stall(server: FaultServer) -> Action:
    """Answer nothing until the test ends (or the hang guard passes); ``server.stalls_ended``
    then records it, so a test can tell that the client gave up while the server still hung."""

    def act(handler: BaseHTTPRequestHandler) -> None:
        server.release.wait(HANG_GUARD_S)
        server.stalls_ended.append(handler.path)

    return act


def drop_mid_body(handler: BaseHTTPRequestHandler) -> None:
    handler.send_response(200)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", "1000")
    handler.end_headers()
    handler.wfile.write(b'{"hits": [')
    handler.wfile.flush()
    handler.close_connection = True


def oversized(declared: bool) -> Action:
    def act(handler: BaseHTTPRequestHandler) -> None:
        size = wire.MAX_RESPONSE_BYTES + 10
        handler.send_response(200)
        handler.send_header("Content-Type", "application/json")
        if declared:
            handler.send_header("Content-Length", str(size))
        handler.end_headers()
        chunk = b" " * 65536
        try:
            for _ in range(size // len(chunk) + 1):
                handler.wfile.write(chunk)
        except OSError:
            pass
        handler.close_connection = True

    return act


def not_json(handler: BaseHTTPRequestHandler) -> None:
    handler.send_response(200)
    handler.send_header("Content-Length", "9")
    handler.end_headers()
    handler.wfile.write(b"<html>hi!")


class FaultServer:
    def __init__(self) -> None:
        self.script: list[Action] = []
        self.received: list[dict[str, Any]] = []
        self.release = threading.Event()
        self.stalls_ended: list[str] = []
        self.lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
                length = int(self.headers.get("Content-Length", "0"))
                body = self.rfile.read(length)
                with outer.lock:
                    outer.received.append(
                        {"path": self.path, "headers": dict(self.headers), "body": body}
                    )
                    action = outer.script.pop(0) if outer.script else reply(200, RECALL_OK)
                action(self)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(0.01,), daemon=True)
        self.thread.start()

    def bodies(self) -> list[dict[str, Any]]:
        return [json.loads(item["body"]) for item in self.received]

    def close(self) -> None:
        self.release.set()
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def server() -> Iterator[FaultServer]:
    made = FaultServer()
    yield made
    made.close()


def client(server: FaultServer, **options: Any) -> HttpFactProvider:
    options.setdefault("timeout_s", 2.0)
    options.setdefault("jitter", lambda: 0.0)
    return HttpFactProvider(server.url, TOKEN, "fault-bot", **options)


def test_a_stalled_read_gives_up_within_the_deadline(server: FaultServer) -> None:
    server.script = [stall(server)] * 3
    provider = client(server, timeout_s=0.6)
    with pytest.raises(ProviderTimeout) as caught:
        answered(lambda: provider.recall(RecallRequest("anything", 5)))
    assert caught.value.code == "deadline_exceeded"
    assert server.stalls_ended == []  # it gave up while the server still hung
    sent = [int(item["headers"][wire.DEADLINE_HEADER]) for item in server.received]
    assert sent and all(0 < budget <= 600 for budget in sent)  # never more than its deadline


def test_5xx_and_429_are_retried_then_succeed(server: FaultServer) -> None:
    pauses: list[float] = []
    server.script = [
        error(503, "unavailable", True),
        error(429, "rate_limited", True),
        reply(200, RECALL_OK),
    ]
    provider = client(server, sleep=pauses.append)
    assert provider.recall(RecallRequest("q", 5)).hits == ()
    assert len(server.received) == 3
    assert pauses == [0.125, 0.5]  # 0.25 s then 1 s, halved by the zero jitter


def test_at_most_two_retries(server: FaultServer) -> None:
    server.script = [error(500, "internal", True)] * 5
    provider = client(server, sleep=lambda _: None)
    with pytest.raises(ProviderUnavailable) as caught:
        provider.recall(RecallRequest("q", 5))
    assert len(server.received) == 3
    assert caught.value.http_status == 500


def test_retry_after_is_honoured_when_it_fits(server: FaultServer) -> None:
    pauses: list[float] = []
    server.script = [reply(429, {"error": {}}, {"Retry-After": "1"}), reply(200, RECALL_OK)]
    client(server, sleep=pauses.append).recall(RecallRequest("q", 5))
    assert pauses == [1.0]


def test_a_retried_write_resends_the_same_operation_id_and_body(server: FaultServer) -> None:
    server.script = [error(503, "unavailable", True), reply(200, RETAIN_OK)]
    result = client(server, sleep=lambda _: None).retain(RetainRequest("hello", ("t",)))
    assert result.id == RETAIN_OK["id"]
    first, second = server.bodies()
    assert first == second
    assert first["operationId"].startswith("op-") and len(first["operationId"]) <= 128
    assert first["spec"] == "fault-bot" and first["version"] == 1


def test_a_write_timing_out_after_every_retry_is_uncertain(server: FaultServer) -> None:
    server.script = [stall(server)] * 3
    provider = client(server, timeout_s=0.8, sleep=lambda _: None)
    with pytest.raises(ProviderUncertain) as caught:
        answered(lambda: provider.retain(RetainRequest("maybe stored")))
    assert server.stalls_ended == []  # it gave up while the server still hung
    uncertain = caught.value
    assert uncertain.status == "uncertain" and uncertain.operation == "retain"
    ids = {body["operationId"] for body in server.bodies()}
    assert ids == {uncertain.operation_id}
    # Resending with that id is how a caller settles the doubt.
    server.script = [reply(200, RETAIN_OK)]
    provider.retain(RetainRequest("maybe stored"), operation_id=uncertain.operation_id)
    assert server.bodies()[-1]["operationId"] == uncertain.operation_id


def test_a_write_without_operation_id_is_never_retried(server: FaultServer) -> None:
    server.script = [stall(server)]
    provider = client(server, timeout_s=0.5, idempotent_writes=False, sleep=lambda _: None)
    with pytest.raises(ProviderUncertain) as caught:
        answered(lambda: provider.forget(ForgetRequest(query="x")))
    assert caught.value.operation_id is None
    time.sleep(0.1)
    assert len(server.received) == 1
    assert "operationId" not in server.bodies()[0]
    server.script = [error(503, "unavailable", True)]
    with pytest.raises(ProviderUnavailable):
        provider.retain(RetainRequest("not idempotent"))
    assert len(server.received) == 2  # a 5xx may have half-run it: not retried either


def test_a_connection_dropped_mid_body(server: FaultServer) -> None:
    server.script = [drop_mid_body, drop_mid_body, reply(200, RECALL_OK)]
    assert client(server, sleep=lambda _: None).recall(RecallRequest("q", 5)).hits == ()
    assert len(server.received) == 3
    server.script = [drop_mid_body] * 3
    with pytest.raises(ProviderUncertain):
        client(server, sleep=lambda _: None).retain(RetainRequest("half answered"))


@pytest.mark.parametrize("declared", [True, False], ids=["content-length", "streamed"])
def test_an_oversized_response_is_refused(server: FaultServer, declared: bool) -> None:
    server.script = [oversized(declared)]
    with pytest.raises(ProviderProtocolError) as caught:
        client(server).recall(RecallRequest("q", 5))
    assert caught.value.code == "response_too_large"
    assert len(server.received) == 1


def test_a_response_that_is_not_json(server: FaultServer) -> None:
    server.script = [not_json]
    with pytest.raises(ProviderProtocolError):
        client(server).recall(RecallRequest("q", 5))


def test_401_is_an_auth_error_and_never_shows_the_token(server: FaultServer) -> None:
    server.script = [error(401, "unauthorized")]
    provider = client(server)
    with pytest.raises(ProviderAuthError) as caught:
        provider.recall(RecallRequest("q", 5))
    assert len(server.received) == 1
    assert server.received[0]["headers"]["Authorization"] == f"Bearer {TOKEN}"
    for text in (str(caught.value), repr(caught.value), repr(provider)):
        assert TOKEN not in text


def test_403_is_a_scope_error(server: FaultServer) -> None:
    server.script = [error(403, "scope_violation")]
    with pytest.raises(ProviderScopeError):
        client(server).retain(RetainRequest("x"))
    assert len(server.received) == 1


def test_limits_are_enforced_before_sending(server: FaultServer) -> None:
    provider = client(server)
    with pytest.raises(ProviderInvalidRequest):
        provider.retain(RetainRequest("x" * 2001))
    with pytest.raises(ProviderInvalidRequest):
        provider.recall(RecallRequest("q" * (wire.MAX_QUERY_CHARS + 1), 5))
    with pytest.raises(ProviderInvalidRequest):
        provider.retain(RetainRequest("x"), operation_id="o" * 129)
    assert server.received == []


def test_health_never_raises(server: FaultServer) -> None:
    server.script = [error(500, "internal", True)]
    health = client(server).health()
    assert health.ok is False and health.message == "health check failed: internal"
    server.script = [stall(server)]
    health = answered(client(server).health)
    assert health.ok is False and health.message == "health check timeout"
    assert server.stalls_ended == []  # it gave up while the server still hung


def test_nothing_listening_is_unavailable_not_uncertain() -> None:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    provider = HttpFactProvider(
        f"http://127.0.0.1:{port}", TOKEN, "fault-bot", sleep=lambda _: None
    )
    with pytest.raises(ProviderUnavailable) as caught:
        provider.retain(RetainRequest("x"))
    assert not isinstance(caught.value, ProviderUncertain)
    assert TOKEN not in str(caught.value)


def test_bad_construction_is_refused() -> None:
    with pytest.raises(ValueError):
        HttpFactProvider("ftp://host", TOKEN, "bot")
    with pytest.raises(ValueError):
        HttpFactProvider("http://user:pw@host", TOKEN, "bot")
    with pytest.raises(ValueError):
        HttpFactProvider("http://host", TOKEN, "bot", max_retries=3)
    with pytest.raises(ValueError):
        HttpFactProvider("http://host", TOKEN, "bot/../x")


def test_the_client_is_a_fact_provider_and_its_errors_are_store_errors() -> None:
    from specwire.runtime.core.errors import StoreError
    from specwire.runtime.facts.providers.protocol import FactProvider

    with HttpFactProvider("http://127.0.0.1:9", TOKEN, "bot") as provider:
        assert isinstance(provider, FactProvider)
    uncertain = ProviderUncertain("x", operation="retain", operation_id="op-1")
    assert isinstance(uncertain, StoreError) and uncertain.status == "uncertain"
    assert isinstance(ProviderInvalidRequest("x"), ValueError)


def test_the_remember_tool_says_an_unconfirmed_write_in_the_models_terms(
    server: FaultServer,
) -> None:
    from specwire.runtime.core.tool_types import ToolContext
    from specwire.runtime.facts.tools import fact_tools

    server.script = [stall(server)] * 3
    remember = fact_tools(
        client(server, timeout_s=0.8, sleep=lambda _: None), ttl_ms=None, recall_k=5
    )[0]
    result = remember.invoke(
        {"text": "maybe stored"},
        ToolContext(session_id="sess_0123456789abcdef", tool_use_id="tu_1"),
    )
    assert result.is_error
    assert result.text == (
        "Remember: the memory store did not confirm the change in time; it may or may not have "
        "been made. Use Recall to check before trying again."
    )
    assert "operation" not in result.text


def test_a_refused_request_reads_like_the_local_providers(server: FaultServer) -> None:
    error = {"error": {"code": "invalid_request", "message": "too many words", "retryable": False}}
    server.script = [reply(400, error)]
    with pytest.raises(ProviderInvalidRequest) as caught:
        client(server).forget(ForgetRequest(query="a b c"))
    assert str(caught.value) == "too many words"
