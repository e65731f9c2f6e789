"""The channel bundle's app, in-process: Slack signatures, event handling and retries, the JSON
webhook and health, through Starlette's TestClient. Slack's Web API is a fake on 127.0.0.1 that
records every ``chat.postMessage`` (tests/e2e/test_channel_serve.py serves the same bundle over
a socket). Leaving the TestClient runs the app's shutdown, which waits for the answers still
being posted: what was posted is then final, so counts need no sleeping."""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest
from inprocess_serving import ROOT, example_agent, serve_app, stores_kept_open
from starlette.applications import Starlette
from starlette.testclient import TestClient

sys.path.insert(0, str(ROOT / "tests" / "e2e"))
from serving_support import FakeSlack, fake_slack, message_event, slack_headers  # noqa: E402

SECRET = "slack-signing-secret-for-tests"
BOT_TOKEN = "xoxb-test-bot-token-000000000000"
WEBHOOK_TOKEN = "webhook-token-0123456789abcdef"
WEBHOOK = {"authorization": f"Bearer {WEBHOOK_TOKEN}"}


@pytest.fixture(scope="module")
def helpdesk_agent() -> ModuleType:
    return example_agent("channel-helpdesk")


@pytest.fixture(scope="module")
def slack() -> Iterator[FakeSlack]:
    """One fake Slack for the module (stopping one takes half a second): tests count the posts
    made since they started."""
    with fake_slack() as fake:
        yield fake


def posts_since(slack: FakeSlack, before: int) -> list[dict[str, object]]:
    return slack.posts[before:]


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    return tmp_path / "work"


@pytest.fixture
def helpdesk_app(
    helpdesk_agent: ModuleType, slack: FakeSlack, workdir: Path, monkeypatch: pytest.MonkeyPatch
) -> Starlette:
    monkeypatch.setenv("HELPDESK_SLACK_SIGNING_SECRET", SECRET)
    monkeypatch.setenv("HELPDESK_SLACK_BOT_TOKEN", BOT_TOKEN)
    monkeypatch.setenv("HELPDESK_WEBHOOK_TOKEN", WEBHOOK_TOKEN)
    monkeypatch.setenv("SPECWIRE_SLACK_API_URL", slack.url)
    app, banner = serve_app(helpdesk_agent, workdir, monkeypatch, "channel")
    assert "POST /slack/events, POST /v1/turns, GET /healthz" in banner
    return app


@pytest.fixture
def helpdesk(helpdesk_app: Starlette) -> Iterator[TestClient]:
    with stores_kept_open(), TestClient(helpdesk_app) as client:
        yield client


def served(app: Starlette) -> TestClient:
    """A client whose ``with`` block ends only when every background answer was posted."""
    return TestClient(app)


def post_event(client: TestClient, body: bytes, **headers: str) -> int:
    return client.post("/slack/events", content=body, headers=headers).status_code


def signed(body: bytes) -> dict[str, str]:
    return slack_headers(SECRET, body)


def session_logs(workdir: Path) -> list[Path]:
    return sorted((workdir / ".specwire" / "sessions").glob("sess_*.jsonl"))


def user_messages_in(log: Path) -> list[str]:
    events = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    return [event["payload"]["text"] for event in events if event["type"] == "user_message"]


def user_messages(workdir: Path) -> list[str]:
    return [text for log in session_logs(workdir) for text in user_messages_in(log)]


def test_healthz_and_url_verification(helpdesk: TestClient) -> None:
    health = helpdesk.get("/healthz")
    assert health.json() == {
        "status": "ok",
        "spec": "channel-helpdesk",
        "target": "channel",
        "slack": True,
        "webhook": True,
    }
    body = json.dumps({"type": "url_verification", "challenge": "abc123"}).encode()
    answer = helpdesk.post("/slack/events", content=body, headers=signed(body))
    assert answer.status_code == 200 and answer.json() == {"challenge": "abc123"}


def test_messages_are_answered_in_their_threads_with_per_thread_memory(
    helpdesk_app: Starlette, slack: FakeSlack, workdir: Path
) -> None:
    first = message_event("Ev1", "<@UBOT> remember: thread one uses the blue runbook", ts="100.1")
    second = message_event("Ev2", "remember: thread two uses the red runbook", ts="200.1")
    before, tokens_before = len(slack.posts), len(slack.tokens)
    with stores_kept_open(), served(helpdesk_app) as client:
        for body in (first, second):
            assert post_event(client, body, **signed(body)) == 200
    posts = posts_since(slack, before)
    assert sorted(str(post["thread_ts"]) for post in posts) == ["100.1", "200.1"]
    assert all(post["channel"] == "C100" for post in posts)
    by_thread = {post["thread_ts"]: str(post["text"]) for post in posts}
    assert "blue runbook" in by_thread["100.1"] and "red runbook" in by_thread["200.1"]
    assert set(slack.tokens[tokens_before:]) == {f"Bearer {BOT_TOKEN}"}

    follow = message_event("Ev3", "what runbook?", ts="100.2", thread_ts="100.1")
    with stores_kept_open(), served(helpdesk_app) as client:
        assert post_event(client, follow, **signed(follow)) == 200
    assert [post["thread_ts"] for post in posts_since(slack, before + 2)] == ["100.1"]
    said = [user_messages_in(log) for log in session_logs(workdir)]
    [thread_one] = [texts for texts in said if "what runbook?" in texts]
    # The mention of the bot is not part of what was said.
    assert thread_one == ["remember: thread one uses the blue runbook", "what runbook?"]
    [thread_two] = [texts for texts in said if "what runbook?" not in texts]
    assert thread_two == ["remember: thread two uses the red runbook"]


def test_a_retried_or_re_delivered_event_runs_once(
    helpdesk_app: Starlette, slack: FakeSlack, workdir: Path
) -> None:
    body = message_event("EvRetry", "remember: the retry fact", ts="300.1")
    mention = json.loads(body)
    mention["event_id"] = "EvRetryMention"  # the same message again, as an app_mention
    mention["event"]["type"] = "app_mention"
    again = json.dumps(mention).encode()
    before = len(slack.posts)
    with stores_kept_open(), served(helpdesk_app) as client:
        assert post_event(client, body, **signed(body)) == 200
        assert post_event(client, body, **signed(body), **{"x-slack-retry-num": "1"}) == 200
        assert post_event(client, again, **signed(again)) == 200
    assert len(posts_since(slack, before)) == 1
    assert user_messages(workdir) == ["remember: the retry fact"]


def test_forged_stale_unsigned_and_bot_events_are_refused_and_store_nothing(
    helpdesk_app: Starlette, slack: FakeSlack, workdir: Path
) -> None:
    forged = message_event("EvForged", "remember: forged", ts="400.1")
    stale = message_event("EvStale", "remember: stale", ts="400.2")
    unsigned = message_event("EvUnsigned", "remember: unsigned", ts="400.3")
    tampered = forged.replace(b"forged", b"tampered")
    from_bot = message_event("EvBot", "remember: from a bot", ts="400.4", bot_id="B9")
    from_self = message_event("EvSelf", "remember: from myself", ts="400.5", user="UBOT")
    old = int(time.time()) - 6 * 60
    before = len(slack.posts)
    with stores_kept_open(), served(helpdesk_app) as client:
        forged_at = post_event(client, forged, **slack_headers("not-the-secret", forged))
        assert forged_at == 401
        assert post_event(client, stale, **slack_headers(SECRET, stale, timestamp=old)) == 401
        assert post_event(client, unsigned, **{"content-type": "application/json"}) == 401
        assert post_event(client, tampered, **signed(forged)) == 401
        refused = client.post("/slack/events", content=forged, headers=signed(tampered))
        assert refused.json()["error"].startswith("not a request from Slack: ")
        assert post_event(client, from_bot, **signed(from_bot)) == 200
        assert post_event(client, from_self, **signed(from_self)) == 200
    assert posts_since(slack, before) == []
    assert not (workdir / ".specwire").exists() or user_messages(workdir) == []


@pytest.mark.parametrize(
    ("body", "status", "says"),
    [
        (b"{not json", 400, "not valid JSON"),
        (b"[1, 2]", 400, "JSON object"),
        (b"x" * (2 * 1024 * 1024), 413, "limit"),
    ],
)
def test_a_signed_but_malformed_envelope_is_a_clear_4xx(
    helpdesk: TestClient, body: bytes, status: int, says: str
) -> None:
    response = helpdesk.post("/slack/events", content=body, headers=signed(body))
    assert response.status_code == status
    assert says.lower() in response.json()["error"].lower()


def test_the_webhook_answers_with_the_reply_and_session(helpdesk: TestClient) -> None:
    first = helpdesk.post(
        "/v1/turns",
        json={"conversation": "ticket-9", "text": "remember: ticket nine is urgent"},
        headers=WEBHOOK,
    )
    second = helpdesk.post(
        "/v1/turns",
        json={"conversation": "ticket-9", "user": "ana", "text": "hello again"},
        headers=WEBHOOK,
    )
    other = helpdesk.post(
        "/v1/turns", json={"conversation": "ticket-10", "text": "hello"}, headers=WEBHOOK
    )
    assert first.status_code == 200, first.text
    assert "ticket nine is urgent" in first.json()["reply"]
    assert second.json()["session_id"] == first.json()["session_id"]
    assert first.json()["session_id"].startswith("sess_")
    assert other.json()["session_id"] != first.json()["session_id"]


@pytest.mark.parametrize(
    ("headers", "body", "status", "says"),
    [
        ({}, {"conversation": "c1", "text": "remember: no token"}, 401, "bearer"),
        (
            {"authorization": "Bearer wrong-token-value"},
            {"conversation": "c1", "text": "remember: wrong token"},
            401,
            "bearer",
        ),
        (
            {"authorization": f"Bearer {WEBHOOK_TOKEN}x"},
            {"conversation": "c1", "text": "remember: near miss"},
            401,
            "bearer",
        ),
        (None, b"{not json", 400, "not valid JSON"),
        (None, {"conversation": "c1"}, 400, "text"),
        (None, {"conversation": "c1", "text": "  \n "}, 400, "text"),
        (
            None,
            b'{"conversation": "c1", "text": "x", "deep": ' + b"[" * 50000 + b"]" * 50000 + b"}",
            400,
            "nests too deeply",
        ),
        (None, {"conversation": 7, "text": "remember: typed"}, 400, "conversation"),
        (None, {"conversation": "../../etc", "text": "remember: traversal"}, 400, "conversation"),
        (None, {"conversation": "a/b", "text": "remember: slash"}, 400, "conversation"),
        (None, {"conversation": "c1", "text": "remember: extra", "admin": True}, 400, "admin"),
        (None, b"[1, 2]", 400, "JSON object"),
        (None, {"conversation": "c1", "text": "x" * (2 * 1024 * 1024)}, 413, "limit"),
    ],
)
def test_bad_webhook_requests_get_a_clear_4xx_and_change_nothing(
    helpdesk: TestClient,
    workdir: Path,
    headers: dict[str, str] | None,
    body: dict[str, object] | bytes,
    status: int,
    says: str,
) -> None:
    sent_headers = WEBHOOK if headers is None else headers
    if isinstance(body, bytes):
        response = helpdesk.post("/v1/turns", content=body, headers=sent_headers)
    else:
        response = helpdesk.post("/v1/turns", json=body, headers=sent_headers)
    assert response.status_code == status
    assert says.lower() in response.json()["error"].lower()
    if status == 401:
        assert response.headers["www-authenticate"] == "Bearer"
    assert session_logs(workdir) == []


def test_a_webhook_conversation_cannot_name_a_slack_thread(
    helpdesk_app: Starlette, slack: FakeSlack
) -> None:
    body = message_event(
        "EvPrivate",
        "plan: private payroll: rotate PAYROLLSTEP; notify",
        ts="900.1",
        channel="CPRIV",
    )
    before = len(slack.posts)
    with stores_kept_open(), served(helpdesk_app) as client:
        assert post_event(client, body, **signed(body)) == 200
    assert len(posts_since(slack, before)) == 1
    with stores_kept_open(), served(helpdesk_app) as client:
        answer = client.post(
            "/v1/turns",
            json={"conversation": "slack:T1:CPRIV:900.1", "text": "call PlanRead {}"},
            headers=WEBHOOK,
        )
    assert answer.status_code == 200
    assert "PAYROLLSTEP" not in answer.text and "payroll" not in answer.text


def test_a_slack_only_bot_has_no_webhook(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, slack: FakeSlack
) -> None:
    agent = example_agent("channel-plain")
    monkeypatch.setenv("PLAIN_SLACK_SIGNING_SECRET", SECRET)
    monkeypatch.setenv("PLAIN_SLACK_BOT_TOKEN", BOT_TOKEN)
    monkeypatch.setenv("SPECWIRE_SLACK_API_URL", slack.url)
    app, banner = serve_app(agent, tmp_path / "work", monkeypatch, "channel")
    assert "POST /v1/turns" not in banner
    with TestClient(app) as client:
        assert client.get("/healthz").json()["webhook"] is False
        off = client.post("/v1/turns", json={"conversation": "c1", "text": "hi"}, headers=WEBHOOK)
        assert off.status_code == 403
        assert "channels.webhook.token" in off.json()["error"]
