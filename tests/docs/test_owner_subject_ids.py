"""The owner's pages name subjects the way the hosts write them: an owner who copies an example
(`codegen memory remember … --user ID`) must reach the key the bot reads, not a key nobody reads.

A Slack person's ``user`` key is ``slack:<team>:<user>`` (ids are namespaced by workspace), a
Slack conversation's ``slack:<team>:<channel>`` (never its thread), a webhook person's
``webhook:<user>``: a bare ``U0123ABCD`` is none of them.
"""

from __future__ import annotations

import re
from pathlib import Path

from specwire.runtime.hosts.http.channel_app import WebhookTurn, webhook_audience
from specwire.runtime.hosts.http.slack_events import message_from_envelope

REPO = Path(__file__).resolve().parents[2]
OWNER = REPO / "docs" / "owner.md"
_SLACK_SHAPED = re.compile(r"^[UW][A-Z0-9]{6,}$")


def slack_dm_audience() -> tuple[str, str]:
    envelope = {
        "type": "event_callback",
        "event_id": "Ev1",
        "team_id": "T0001",
        "event": {
            "type": "message",
            "channel": "D0123",
            "channel_type": "im",
            "user": "U0123ABCD",
            "text": "hello",
            "ts": "1.000100",
            "thread_ts": "1.000000",
        },
    }
    message = message_from_envelope(envelope)
    assert message is not None
    audience = message.audience()
    assert audience.user is not None and audience.conversation is not None
    return audience.user, audience.conversation


def test_the_owner_page_examples_use_the_subject_the_slack_host_writes() -> None:
    page = OWNER.read_text(encoding="utf-8")
    user, conversation = slack_dm_audience()
    assert (user, conversation) == ("slack:T0001:U0123ABCD", "slack:T0001:D0123")
    assert f"--user {user}" in page
    bare = [found for found in re.findall(r"--user (\S+)", page) if _SLACK_SHAPED.match(found)]
    assert bare == [], f"--user examples a Slack host never writes: {bare}"
    # The conversation key is the channel's: a thread has no key of its own.
    assert "slack:<team>:<channel>[:<thread>]" not in page
    assert "slack:<team>:<user>" in page and "slack:<team>:<channel>" in page


def test_the_owner_page_names_the_webhook_subjects() -> None:
    page = OWNER.read_text(encoding="utf-8")
    audience = webhook_audience(WebhookTurn(conversation="ticket-9", user="ana", text="hi"))
    assert (audience.user, audience.conversation) == ("webhook:ana", "webhook:ticket-9")
    assert "webhook:<user>" in page and "webhook:<conversation>" in page
