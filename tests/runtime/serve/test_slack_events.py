"""Slack's request signatures, event envelopes and retries, as the channel gateway reads them."""

from __future__ import annotations

import hashlib
import hmac
from typing import Any

import pytest

from specwire.runtime.hosts.http.slack_events import (
    SeenEvents,
    SlackMessage,
    message_from_envelope,
    signature_problem,
)

SECRET = "8f742231b10e8888abcd99yyyzzz85a5"
BODY = b"token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&command=%2Fweather"
NOW = 1_531_420_618


def sign(body: bytes, timestamp: int, secret: str = SECRET) -> str:
    base = b"v0:" + str(timestamp).encode() + b":" + body
    return "v0=" + hmac.new(secret.encode(), base, hashlib.sha256).hexdigest()


def test_a_correctly_signed_fresh_request_passes() -> None:
    assert signature_problem(SECRET, str(NOW), sign(BODY, NOW), BODY, now=NOW + 10) is None


@pytest.mark.parametrize(
    ("timestamp", "signature", "body", "says"),
    [
        (None, sign(BODY, NOW), BODY, "missing"),
        (str(NOW), None, BODY, "missing"),
        ("yesterday", sign(BODY, NOW), BODY, "not a Unix time"),
        ("\u00b2", sign(BODY, NOW), BODY, "not a Unix time"),  # isdigit() says yes, int() no
        ("9" * 5000, sign(BODY, NOW), BODY, "not a Unix time"),
        (str(NOW - 301), sign(BODY, NOW - 301), BODY, "5 minutes"),
        (str(NOW + 301), sign(BODY, NOW + 301), BODY, "5 minutes"),
        (str(NOW), sign(BODY, NOW, "another-secret"), BODY, "does not match"),
        (str(NOW), sign(BODY, NOW), BODY + b"&admin=1", "does not match"),
        (str(NOW), sign(BODY, NOW - 1), BODY, "does not match"),
        (str(NOW), "v0=ñ", BODY, "does not match"),
    ],
)
def test_forged_stale_or_unsigned_requests_are_refused(
    timestamp: str | None, signature: str | None, body: bytes, says: str
) -> None:
    problem = signature_problem(SECRET, timestamp, signature, body, now=NOW)
    assert problem is not None and says in problem


def envelope(**event: Any) -> dict[str, Any]:
    base = {"type": "message", "channel": "C1", "user": "U1", "text": "hi", "ts": "1.0"}
    return {
        "type": "event_callback",
        "team_id": "T1",
        "event_id": "Ev1",
        "event": {**base, **event},
        "authorizations": [{"user_id": "UBOT", "is_bot": True}],
    }


def test_a_person_s_message_is_read_with_the_bot_mention_removed() -> None:
    message = message_from_envelope(envelope(text="<@UBOT> deploy status?", thread_ts="0.5"))
    assert message == SlackMessage("Ev1", "T1", "C1", "U1", "deploy status?", "1.0", "0.5")
    assert message.reply_thread == "0.5"


@pytest.mark.parametrize(
    "event",
    [
        {"bot_id": "B1"},
        {"subtype": "bot_message"},
        {"subtype": "message_changed"},
        {"subtype": "message_deleted"},
        {"subtype": "channel_join"},
        {"user": "UBOT"},
        {"text": "<@UBOT>"},
        {"type": "reaction_added"},
        {"user": None},
        {"channel": 5},
    ],
)
def test_nothing_to_answer(event: dict[str, Any]) -> None:
    assert message_from_envelope(envelope(**event)) is None


def test_session_keys_follow_the_routing_setting() -> None:
    top = message_from_envelope(envelope(ts="9.1"))
    reply = message_from_envelope(envelope(ts="9.2", thread_ts="9.1"))
    assert top is not None and reply is not None
    assert top.conversation_key("thread") == reply.conversation_key("thread") == "slack:T1:C1:9.1"
    assert top.conversation_key("channel") == "slack:T1:C1"
    assert top.conversation_key("user") == "slack:T1:user:U1"


def test_seen_events_answer_each_key_once_within_the_window() -> None:
    seen = SeenEvents(window_s=60, capacity=3)
    assert seen.first_time("Ev1", "C1:1.0", now=0)
    assert not seen.first_time("Ev1", "C1:1.0", now=1)  # Slack's retry
    assert not seen.first_time("Ev2", "C1:1.0", now=2)  # the app_mention twin
    assert seen.first_time("Ev1", now=100)  # the window passed
    for n in range(5):
        seen.first_time(f"E{n}", now=101)
    assert seen.first_time("Ev1", now=102)  # pushed out by capacity
