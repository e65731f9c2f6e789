"""Invalid Unicode in an HTTP body — a lone surrogate escape (``"\\ud800"``) or bytes that are not
UTF-8 — is a 400 naming the field, never a 500, in each of the three HTTP apps: the managed
service, the channel bot (Slack events and the webhook) and the memory service."""

from __future__ import annotations

import hashlib
import hmac
import json
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from specwire.runtime.core.scopes import Audience
from specwire.runtime.hosts.http.channel_app import (
    ChannelReply,
    ChannelService,
    SlackSettings,
    build_channel_app,
)
from specwire.runtime.hosts.http.common import BadRequest, parse_json
from specwire.runtime.hosts.http.managed_app import ManagedReply, ManagedService, build_managed_app
from specwire.runtime.hosts.http.memory_server import LocalStores, memory_app
from specwire.runtime.hosts.http.slack_replies import SlackPoster
from specwire.runtime.hosts.http.tenant_keys import TenantKeys
from specwire.runtime.hosts.http.usage_ledger import UsageLedger
from specwire.runtime.hosts.types import TenantConfig
from specwire.runtime.models import Usage

KEY = "sk-acme-0123456789abcdef0123"
TOKEN = "memory-token-0123456789abcdef"
WEBHOOK = "webhook-token-0123456789abcdef"
SIGNING = "8f742231b10e8888abcd99yyyzzz85a5"
LONE = b"\\ud800"  # a JSON escape for a lone surrogate, as a client sends it
BAD_BYTES = b"\xff\xfe"

# (body bytes, the field the 400 must name)
CASES = {
    "escape": (b'{"model": "bot", "messages": [{"role": "user", "content": "hi ' + LONE + b'"}]}'),
    "bytes": (
        b'{"model": "bot", "messages": [{"role": "user", "content": "hi ' + BAD_BYTES + b'"}]}'
    ),
}


def _keys(secret: str, tenant: str) -> TenantKeys:
    return TenantKeys(((tenant, hashlib.sha256(secret.encode()).digest()),))


@pytest.mark.parametrize(
    ("body", "field"),
    [
        (b'{"a": [1, {"b": "x' + LONE + b'"}]}', "a.1.b"),
        (b'{"a": "ok", "t": "' + BAD_BYTES + b'"}', "t"),
        (b'{"k' + LONE + b'": 1}', "k?"),
        (b'"' + LONE + b'"', "(the body)"),
        (b'{"lower": "\\udfff"}', "lower"),
    ],
)
def test_parse_json_names_the_field_holding_invalid_unicode(body: bytes, field: str) -> None:
    with pytest.raises(BadRequest) as caught:
        parse_json(body)
    assert caught.value.status == 400
    assert caught.value.param == field
    assert f"field {field!r} holds invalid Unicode" in caught.value.message


def test_valid_pairs_and_plain_backslashes_still_parse() -> None:
    assert parse_json(b'{"e": "\\ud83d\\ude00", "p": "C:\\\\udata"}') == {
        "e": "\U0001f600",
        "p": "C:\\udata",
    }
    assert parse_json('{"t": "caf\u00e9 \u4eca\u5929"}'.encode()) == {"t": "caf\u00e9 \u4eca\u5929"}


# -- the managed service -----------------------------------------------------------------------


@pytest.fixture
def managed(tmp_path: Path) -> Iterator[tuple[TestClient, list[str]]]:
    ran: list[str] = []

    def run_turn(
        tenant_id: str, session: str, message: str, user: str | None, stream: object
    ) -> ManagedReply:
        ran.append(message)
        return ManagedReply(session, [f"echo {message}"], Usage(10, 2, 0))

    service = ManagedService(
        spec_name="bot",
        keys=_keys(KEY, "acme"),
        tenants={"acme": TenantConfig("acme")},
        run_turn=run_turn,
        ledger_for=lambda tenant: UsageLedger(tmp_path / tenant, "bot"),
        max_body=1 << 20,
        log=lambda line: None,
    )
    with TestClient(build_managed_app(service)) as client:
        yield client, ran


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_managed_service_refuses_invalid_unicode_with_400(
    managed: tuple[TestClient, list[str]], case: str
) -> None:
    client, ran = managed
    answer = client.post(
        "/v1/chat/completions",
        content=CASES[case],
        headers={"authorization": f"Bearer {KEY}", "content-type": "application/json"},
    )
    assert answer.status_code == 400, answer.text
    error = answer.json()["error"]
    assert error["param"] == "messages.0.content"
    assert "invalid Unicode" in error["message"]
    assert ran == []
    fine = client.post(
        "/v1/chat/completions",
        json={"model": "bot", "messages": [{"role": "user", "content": "hi"}]},
        headers={"authorization": f"Bearer {KEY}"},
    )
    assert fine.status_code == 200 and ran == ["hi"]


# -- the channel bot ---------------------------------------------------------------------------


@pytest.fixture
def channel() -> Iterator[tuple[TestClient, list[str]]]:
    ran: list[str] = []

    def run_turn(
        key: str, message: str, info: Mapping[str, Any], audience: Audience, stream: object
    ) -> ChannelReply:
        ran.append(message)
        return ChannelReply(key, [f"echo {message}"])

    service = ChannelService(
        spec_name="bot",
        session_key="thread",
        run_turn=run_turn,
        max_body=1 << 20,
        log=lambda line: None,
        slack=SlackSettings(SIGNING, SlackPoster("xoxb-never-used")),
        webhook_token=WEBHOOK,
    )
    with TestClient(build_channel_app(service)) as client:
        yield client, ran


def _slack_headers(body: bytes) -> dict[str, str]:
    stamp = str(int(time.time()))
    base = b"v0:" + stamp.encode() + b":" + body
    signature = "v0=" + hmac.new(SIGNING.encode(), base, hashlib.sha256).hexdigest()
    return {
        "x-slack-request-timestamp": stamp,
        "x-slack-signature": signature,
        "content-type": "application/json",
    }


@pytest.mark.parametrize("bad", [LONE, BAD_BYTES], ids=["escape", "bytes"])
def test_a_signed_slack_event_with_invalid_unicode_is_a_400(
    channel: tuple[TestClient, list[str]], bad: bytes
) -> None:
    client, ran = channel
    body = (
        b'{"type": "event_callback", "team_id": "T1", "event_id": "Ev1", "event": {"type": '
        b'"message", "channel": "C1", "user": "U1", "ts": "1.0", "text": "hi ' + bad + b'"}}'
    )
    answer = client.post("/slack/events", content=body, headers=_slack_headers(body))
    assert answer.status_code == 400, answer.text
    assert "field 'event.text' holds invalid Unicode" in answer.json()["error"]
    assert ran == []


@pytest.mark.parametrize("bad", [LONE, BAD_BYTES], ids=["escape", "bytes"])
def test_a_webhook_turn_with_invalid_unicode_is_a_400(
    channel: tuple[TestClient, list[str]], bad: bytes
) -> None:
    client, ran = channel
    body = b'{"conversation": "c1", "text": "hi ' + bad + b'"}'
    headers = {"authorization": f"Bearer {WEBHOOK}", "content-type": "application/json"}
    answer = client.post("/v1/turns", content=body, headers=headers)
    assert answer.status_code == 400, answer.text
    assert "field 'text' holds invalid Unicode" in answer.json()["error"]
    assert ran == []
    fine = client.post("/v1/turns", json={"conversation": "c1", "text": "hi"}, headers=headers)
    assert fine.status_code == 200 and ran == ["hi"]


# -- the memory service ------------------------------------------------------------------------


@pytest.mark.parametrize("bad", [LONE, BAD_BYTES], ids=["escape", "bytes"])
def test_the_memory_service_refuses_invalid_unicode_with_400(tmp_path: Path, bad: bytes) -> None:
    stores = LocalStores(tmp_path, ["acme"])
    headers = {"authorization": f"Bearer {TOKEN}", "content-type": "application/json"}
    try:
        with TestClient(memory_app(stores, {TOKEN: "acme"})) as client:
            body = b'{"spec": "bot", "text": "the code is 1 ' + bad + b'", "tags": []}'
            answer = client.post("/v1/retain", content=body, headers=headers)
            assert answer.status_code == 400, answer.text
            error = answer.json()["error"]
            assert error["code"] == "invalid_request"
            assert error["param"] == "text"
            assert "invalid Unicode" in error["message"]
            recall = client.post(
                "/v1/recall", json={"spec": "bot", "query": "code"}, headers=headers
            )
            assert recall.status_code == 200 and recall.json()["hits"] == []
    finally:
        stores.close()
    assert json.dumps(error)  # the envelope itself is valid JSON text
