"""Issue 21 acceptance on a built channel bundle (``agent.py serve``, Slack events and the
webhook): a fact told in a direct message is that person's, a fact told in a channel stays in
that channel, and ``followUser`` lets a person's facts follow them (and only them).

The bundle runs as a subprocess on 127.0.0.1 with the scripted model (``remember: …`` calls
Remember, ``recall: …`` calls Recall and answers with its result); Slack's Web API is a fake on
127.0.0.1 that records every ``chat.postMessage``.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator

import pytest
from serving_support import (
    FakeSlack,
    Served,
    build_bundle,
    clean_env,
    fake_slack,
    message_event,
    served,
    slack_headers,
)

pytestmark = pytest.mark.e2e

SECRET = "slack-signing-secret-for-scope-tests"
BOT_TOKEN = "xoxb-scope-test-bot-token-0000000"
WEBHOOK_TOKEN = "webhook-token-scopes-0123456789"

SPEC = """\
name: scoped-helpdesk
target: channel
agent:
  model: scripted
  instructions: You help the team.
channels:
  slack:
    botToken: $SCOPED_SLACK_BOT_TOKEN
    signingSecret: $SCOPED_SLACK_SIGNING_SECRET
  webhook:
    token: $SCOPED_WEBHOOK_TOKEN
routing:
  sessionKey: thread
memory:
{memory}
"""


@pytest.fixture(scope="module", params=["default", "followUser"])
def bot(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[str, Served, FakeSlack]]:
    mode: str = request.param
    base = tmp_path_factory.mktemp(f"scopes-{mode}")
    memory = "  autoRecall: false\n"
    if mode == "followUser":
        memory += "  scope: {default: user, followUser: true}\n"
    spec = base / "scoped-helpdesk.yaml"
    spec.write_text(SPEC.format(memory=memory.rstrip("\n")), encoding="utf-8")
    agent = build_bundle(spec, base / "out")
    with fake_slack() as slack:
        env = clean_env(
            SCOPED_SLACK_SIGNING_SECRET=SECRET,
            SCOPED_SLACK_BOT_TOKEN=BOT_TOKEN,
            SCOPED_WEBHOOK_TOKEN=WEBHOOK_TOKEN,
            SPECWIRE_SLACK_API_URL=slack.url,
        )
        with served(agent, base / "work", env) as server:
            yield mode, server, slack
        assert "Traceback" not in server.stderr


def webhook(
    server: Served, conversation: str, user: str, text: str, *, direct: bool = False
) -> str:
    body = {"conversation": conversation, "user": user, "text": text, "direct": direct}
    with server.client() as client:
        answer = client.post(
            "/v1/turns", json=body, headers={"authorization": f"Bearer {WEBHOOK_TOKEN}"}
        )
    assert answer.status_code == 200, answer.text
    reply: str = answer.json()["reply"]
    return reply


_ids = itertools.count(1)


def slack(server: Served, fake: FakeSlack, channel: str, user: str, text: str) -> str:
    """One Slack message (``D…`` channels are direct messages, ``channel_type: im``); the
    bot's answer as posted to the fake Web API."""
    number = next(_ids)
    body = message_event(
        f"Ev{number:06d}",
        text,
        channel=channel,
        user=user,
        ts=f"1700000{number:03d}.000100",
        channel_type="im" if channel.startswith("D") else "channel",
    )
    before = len(fake.posts)
    with server.client() as client:
        status = client.post("/slack/events", content=body, headers=slack_headers(SECRET, body))
    assert status.status_code == 200
    posts = fake.wait_for_posts(before + 1)
    assert len(posts) > before, "the bot did not answer"
    text_posted: str = posts[before]["text"]
    return text_posted


def recalls(reply: str, needle: str) -> bool:
    assert reply.startswith("Done: "), reply  # the Recall tool ran and answered
    return needle in reply


def test_webhook_dm_facts_stay_with_the_person(bot: tuple[str, Served, FakeSlack]) -> None:
    mode, server, _ = bot
    told = webhook(server, "dm-alice", "alice", "remember: my locker code is 4417", direct=True)
    assert "remembered" in told, told
    # In a shared conversation neither Bob nor (by default) Alice gets it back.
    assert not recalls(webhook(server, "general", "bob", "recall: locker code"), "4417")
    in_channel = recalls(webhook(server, "general", "alice", "recall: locker code"), "4417")
    assert in_channel == (mode == "followUser")
    # Alice back in her direct conversation gets it.
    assert recalls(webhook(server, "dm-alice", "alice", "recall: locker code", direct=True), "4417")
    # Bob's own direct conversation does not have it either.
    assert not recalls(webhook(server, "dm-bob", "bob", "recall: locker code", direct=True), "4417")


def test_webhook_channel_facts_stay_in_their_channel(bot: tuple[str, Served, FakeSlack]) -> None:
    _, server, _ = bot
    told = webhook(server, "ops", "bob", "remember: the ops standup is at nine")
    assert "remembered" in told, told
    assert recalls(webhook(server, "ops", "alice", "recall: ops standup"), "at nine")
    assert not recalls(webhook(server, "random", "alice", "recall: ops standup"), "at nine")
    assert not recalls(
        webhook(server, "dm-bob", "bob", "recall: ops standup", direct=True), "at nine"
    )


def test_slack_dm_facts_stay_with_the_person(bot: tuple[str, Served, FakeSlack]) -> None:
    mode, server, fake = bot
    told = slack(server, fake, "DALICE", "UALICE", "remember: my parking spot is B12")
    assert "remembered" in told, told
    assert not recalls(slack(server, fake, "CGENERAL", "UBOB", "recall: parking spot"), "B12")
    in_channel = recalls(slack(server, fake, "CGENERAL", "UALICE", "recall: parking spot"), "B12")
    assert in_channel == (mode == "followUser")
    assert recalls(slack(server, fake, "DALICE", "UALICE", "recall: parking spot"), "B12")
    # A webhook caller naming the same user id is not that Slack user.
    assert not recalls(
        webhook(server, "dm-x", "UALICE", "recall: parking spot", direct=True), "B12"
    )


def test_slack_channel_facts_stay_in_their_channel(bot: tuple[str, Served, FakeSlack]) -> None:
    _, server, fake = bot
    told = slack(server, fake, "CRELEASE", "UBOB", "remember: the release train leaves Tuesday")
    assert "remembered" in told, told
    assert recalls(slack(server, fake, "CRELEASE", "UALICE", "recall: release train"), "Tuesday")
    assert not recalls(slack(server, fake, "COTHER", "UALICE", "recall: release train"), "Tuesday")
    assert not recalls(slack(server, fake, "DBOB", "UBOB", "recall: release train"), "Tuesday")


def test_a_webhook_direct_message_needs_its_user(bot: tuple[str, Served, FakeSlack]) -> None:
    _, server, _ = bot
    with server.client() as client:
        answer = client.post(
            "/v1/turns",
            json={"conversation": "dm", "text": "remember: x", "direct": True},
            headers={"authorization": f"Bearer {WEBHOOK_TOKEN}"},
        )
    assert answer.status_code == 400 and "user" in answer.json()["error"]
