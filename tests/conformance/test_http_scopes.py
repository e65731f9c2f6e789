"""Memory scopes on the HTTP contract beyond the backend-neutral suite: what crosses the wire.

A client written before scopes keeps working against this server (its bodies are accepted, the
replies carry no field it would refuse, and it sees only ``agent`` facts); this client's plain
calls look exactly like that older client's, so a server from before scopes serves them, and a
scoped call is refused by such a server instead of served unscoped; a server that answers with
facts outside the request's fence never gets them past the client.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from conformance_harness import HANG_GUARD_S, LocalStoresForTest, ManualClock, ThreadedServer
from test_http_client_faults import TOKEN, FaultServer, reply

from specwire.runtime.core.scopes import AGENT, ScopeKey
from specwire.runtime.facts.model import CapExceededError
from specwire.runtime.facts.providers.errors import ProviderInvalidRequest
from specwire.runtime.facts.providers.http import contract as wire
from specwire.runtime.facts.providers.http.client import HttpFactProvider
from specwire.runtime.facts.providers.protocol import (
    ForgetRequest,
    ReadRequest,
    RecallRequest,
    RetainRequest,
)
from specwire.runtime.hosts.http.memory_server import memory_app

TOKEN_A = "token-of-tenant-a-0123456789"
ALICE = ScopeKey("user", "U-ALICE")
BOB = ScopeKey("user", "U-BOB")
SPEC = "bot"


class Served:
    def __init__(self, root: Path) -> None:
        self.stores = LocalStoresForTest(root, ManualClock())
        self.server = ThreadedServer(memory_app(self.stores, {TOKEN_A: "tenant-a"}))
        self.http = httpx.Client(base_url=self.server.url, timeout=HANG_GUARD_S)

    def post(self, op: str, body: dict[str, Any], *, scoped: bool = False) -> httpx.Response:
        headers = {"Authorization": f"Bearer {TOKEN_A}"}
        if scoped:
            headers[wire.FEATURES_HEADER] = wire.FEATURE_SCOPES
        return self.http.post(
            f"/v1/{op}", json={"version": 1, "spec": SPEC, **body}, headers=headers
        )

    def client(self) -> HttpFactProvider:
        return HttpFactProvider(self.server.url, TOKEN_A, SPEC, timeout_s=HANG_GUARD_S)

    def close(self) -> None:
        self.http.close()
        self.stores.close()
        self.server.stop()


@pytest.fixture
def server() -> Iterator[FaultServer]:
    made = FaultServer()
    yield made
    made.close()


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    made = Served(tmp_path)
    yield made
    made.close()


def test_a_client_from_before_scopes_sees_agent_facts_and_replies_it_can_read(
    served: Served,
) -> None:
    client = served.client()
    client.retain(RetainRequest("the office wifi is guest-5", scope=AGENT))
    client.retain(RetainRequest("Alice's wifi password hint is her cat", scope=ALICE))
    # The old client's bodies: no scope fields, no Memory-Features header.
    retained = served.post("retain", {"text": "the printer is on floor 2"})
    assert retained.status_code == 200, retained.text
    assert set(retained.json()) == {"id", "created"}
    recalled = served.post("recall", {"query": "wifi printer", "limit": 10})
    hits = recalled.json()["hits"]
    # Both agent facts; never Alice's.
    assert sorted(hit["text"] for hit in hits) == [
        "the office wifi is guest-5",
        "the printer is on floor 2",
    ]
    assert all(set(hit) == {"id", "text", "tags", "score", "evidenceBacked"} for hit in hits)
    caps = served.post("capabilities", {}).json()
    assert not {"scopes", "keys", "pointRead"} & set(caps)
    # Its forget reaches agent facts only: Alice's fact stays.
    forgot = served.post("forget", {"query": "wifi"})
    assert forgot.json()["removed"] == 1
    assert [hit.text for hit in client.recall(RecallRequest("wifi", 5, (ALICE,))).hits] == [
        "Alice's wifi password hint is her cat"
    ]
    client.close()


def test_scoped_replies_carry_the_scope_fields(served: Served) -> None:
    served.post("retain", {"text": "Alice likes oolong", "scope": "user", "subject": "U-ALICE"})
    keyed = served.post(
        "retain",
        {"text": "body", "key": "AGENT.md", "tier": "AGENT", "mode": "replace", "maxBytes": 4000},
        scoped=True,
    )
    assert keyed.json()["bytes"] == 4
    visible = [{"scope": "agent"}, {"scope": "user", "subject": "U-ALICE"}]
    hits = served.post("recall", {"query": "oolong", "visible": visible}, scoped=True).json()[
        "hits"
    ]
    assert [(h["text"], h["scope"], h["subject"]) for h in hits] == [
        ("Alice likes oolong", "user", "U-ALICE")
    ]
    records = served.post("read", {"key": "AGENT.md", "visible": visible}, scoped=True).json()[
        "records"
    ]
    assert [(r["text"], r["scope"], r["key"], r["tier"]) for r in records] == [
        ("body", "agent", "AGENT.md", "AGENT")
    ]
    caps = served.post("capabilities", {}, scoped=True).json()
    assert caps["scopes"] is caps["keys"] is caps["pointRead"] is True


@pytest.mark.parametrize(
    ("op", "body", "param"),
    [
        ("retain", {"text": "x", "scope": "user"}, None),  # a user key needs its subject
        ("retain", {"text": "x", "scope": "agent", "subject": "U1"}, None),
        ("retain", {"text": "x", "subject": "U1"}, None),
        ("retain", {"text": "x", "scope": "everyone"}, "scope"),
        ("retain", {"text": "x", "mode": "append"}, None),  # a mode needs a key
        ("retain", {"text": "x", "key": "k", "ifAbsent": True}, None),
        ("retain", {"text": "x", "key": "k", "tier": "diary"}, "tier"),
        ("retain", {"text": "x" * 2001}, "text"),
        ("recall", {"query": "q", "visible": []}, "visible"),
        ("recall", {"query": "q", "visible": [{"scope": "role"}]}, None),
        ("forget", {"query": "q", "allScopes": True, "visible": [{"scope": "agent"}]}, None),
        ("read", {"id": "mem_0123456789abcdef", "key": "k"}, None),
    ],
)
def test_malformed_scope_fields_are_400(
    served: Served, op: str, body: dict[str, Any], param: str | None
) -> None:
    response = served.post(op, body)
    assert response.status_code == 400, response.text
    error = response.json()["error"]
    assert error["code"] == "invalid_request"
    if param is not None:
        assert error["param"].split(".")[0] == param


def test_a_keyed_text_may_be_long_and_a_cap_refuses_with_nothing_written(
    served: Served,
) -> None:
    client = served.client()
    long_text = "é" * 20_000  # 40,000 bytes: past a plain fact's 2,000 characters
    first = client.retain(RetainRequest(long_text, key="pins.md", tier="pins", max_bytes=60_000))
    assert first.bytes == 40_000
    response = served.post(
        "retain",
        {"text": "more", "key": "pins.md", "tier": "pins", "mode": "append", "maxBytes": 40_001},
        scoped=True,
    )
    assert response.status_code == 422, response.text
    error = response.json()["error"]
    assert error["code"] == "cap_exceeded" and error["retryable"] is False
    assert error["cap"] == {"capBytes": 40_001, "currentSize": 40_000, "projectedSize": 40_005}
    # The client raises what a local store raises, with the sizes.
    with pytest.raises(CapExceededError) as refused:
        client.retain(
            RetainRequest("more", key="pins.md", tier="pins", mode="append", max_bytes=40_001)
        )
    assert (refused.value.key, refused.value.cap_bytes, refused.value.projected_size) == (
        "pins.md",
        40_001,
        40_005,
    )
    [record] = client.read(ReadRequest(key="pins.md")).records
    assert record.id == first.id and record.text == long_text
    client.close()


def test_plain_calls_send_exactly_what_a_client_before_scopes_sent(
    server: FaultServer,
) -> None:
    server.script = [
        reply(200, {"id": "mem_0123456789abcdef", "created": True}),
        reply(200, {"hits": []}),
        reply(200, {"removed": 0}),
    ]
    provider = HttpFactProvider(server.url, TOKEN, "fault-bot", timeout_s=2.0)
    provider.retain(RetainRequest("plain"))
    provider.recall(RecallRequest("plain", 5))
    provider.forget(ForgetRequest(query="plain", visible=(AGENT,)))
    keys = [set(body) - {"version", "spec", "operationId"} for body in server.bodies()]
    assert keys == [{"text", "tags", "ifAbsent"}, {"query", "limit"}, {"query"}]
    assert all(
        item["headers"].get(wire.FEATURES_HEADER) == wire.FEATURE_SCOPES for item in server.received
    )


def test_a_scoped_call_to_a_server_from_before_scopes_fails_closed(server: FaultServer) -> None:
    """An older server refuses the unknown field (400): the client raises, it never falls back
    to an unscoped recall."""
    server.script = [
        reply(
            400,
            {
                "error": {
                    "code": "invalid_request",
                    "message": "visible: Extra inputs are not permitted",
                    "retryable": False,
                    "param": "visible",
                }
            },
        )
    ]
    provider = HttpFactProvider(server.url, TOKEN, "fault-bot", timeout_s=2.0)
    with pytest.raises(ProviderInvalidRequest):
        provider.recall(RecallRequest("q", 5, (AGENT, ALICE)))
    assert len(server.received) == 1
    assert server.bodies()[0]["visible"] == [
        {"scope": "agent"},
        {"scope": "user", "subject": "U-ALICE"},
    ]


def test_facts_outside_the_fence_never_pass_the_client(server: FaultServer) -> None:
    def hit(text: str, **scope: Any) -> dict[str, Any]:
        return {
            "id": "mem_0123456789abcdef",
            "text": text,
            "tags": [],
            "score": 0.5,
            "evidenceBacked": False,
            **scope,
        }

    server.script = [
        reply(
            200,
            {
                "hits": [
                    hit("Alice's", scope="user", subject="U-ALICE"),
                    hit("Bob's", scope="user", subject="U-BOB"),
                    hit("a tier note", scope="user", subject="U-ALICE", key="pins.md", tier="pins"),
                    hit("agent's"),
                ]
            },
        ),
        reply(
            200,
            {
                "records": [
                    {
                        "id": "mem_0123456789abcdef",
                        "text": "Bob's pin",
                        "tags": [],
                        "createdAt": "2026-01-01T00:00:00Z",
                        "evidenceBacked": False,
                        "scope": "user",
                        "subject": "U-BOB",
                        "key": "pins.md",
                    }
                ]
            },
        ),
    ]
    provider = HttpFactProvider(server.url, TOKEN, "fault-bot", timeout_s=2.0)
    hits = provider.recall(RecallRequest("q", 10, (ALICE,))).hits
    assert [(hit.text, hit.scope) for hit in hits] == [("Alice's", ALICE)]
    assert provider.read(ReadRequest(key="pins.md", visible=(AGENT, ALICE))).records == ()


def test_the_server_refuses_scopes_for_a_provider_without_them(tmp_path: Path) -> None:
    """A provider that predates scopes (here: one proxied from an older service) would serve a
    scoped request unscoped; the server refuses it (422) instead."""
    from specwire.runtime.facts.providers.protocol import Capabilities

    class Unscoped:
        def capabilities(self) -> Capabilities:
            return Capabilities(lexical=True)

        def recall(self, request: Any) -> Any:
            raise AssertionError("never called")

    server = ThreadedServer(memory_app(lambda *_: Unscoped(), {TOKEN_A: "tenant-a"}))  # type: ignore[arg-type, return-value]
    try:
        with httpx.Client(base_url=server.url, timeout=HANG_GUARD_S) as http:
            response = http.post(
                "/v1/recall",
                content=json.dumps(
                    {"version": 1, "spec": SPEC, "query": "q", "visible": [{"scope": "crew"}]}
                ),
                headers={"Authorization": f"Bearer {TOKEN_A}"},
            )
        assert response.status_code == 422
        assert "not supported" in response.json()["error"]["message"]
    finally:
        server.stop()
