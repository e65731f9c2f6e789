"""`agent.py serve` on the built channel-helpdesk bundle: Slack events and the JSON webhook.

The bundle runs as a subprocess on 127.0.0.1; Slack's Web API is a fake on 127.0.0.1 that
records every ``chat.postMessage``. Nothing leaves the machine.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from serving_support import (
    ROOT,
    FakeSlack,
    Served,
    build_bundle,
    clean_env,
    fake_slack,
    message_event,
    served,
    slack_headers,
)

SECRET = "slack-signing-secret-for-tests"
BOT_TOKEN = "xoxb-test-bot-token-000000000000"
WEBHOOK_TOKEN = "webhook-token-0123456789abcdef"


@pytest.fixture(scope="module")
def helpdesk(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Served, FakeSlack]]:
    base = tmp_path_factory.mktemp("helpdesk")
    agent = build_bundle(ROOT / "examples" / "channel-helpdesk.yaml", base / "out")
    with fake_slack() as slack:
        env = clean_env(
            HELPDESK_SLACK_SIGNING_SECRET=SECRET,
            HELPDESK_SLACK_BOT_TOKEN=BOT_TOKEN,
            HELPDESK_WEBHOOK_TOKEN=WEBHOOK_TOKEN,
            SPECWIRE_SLACK_API_URL=slack.url,
        )
        with served(agent, base / "work", env) as server:
            yield server, slack
        assert "Traceback" not in server.stderr


def post_event(server: Served, body: bytes, **headers: str) -> int:
    with server.client() as client:
        response = client.post("/slack/events", content=body, headers=headers)
    return response.status_code


def session_logs(server: Served) -> list[Path]:
    return sorted((server.workdir / ".specwire" / "sessions").glob("sess_*.jsonl"))


def user_messages_in(log: Path) -> list[str]:
    texts = []
    for line in log.read_text(encoding="utf-8").splitlines():
        event = json.loads(line)
        if event["type"] == "user_message":
            texts.append(event["payload"]["text"])
    return texts


def user_messages(server: Served) -> list[str]:
    return [text for log in session_logs(server) for text in user_messages_in(log)]


def test_healthz_and_url_verification(helpdesk: tuple[Served, FakeSlack]) -> None:
    server, _ = helpdesk
    with server.client() as client:
        health = client.get("/healthz").json()
    assert health["status"] == "ok" and health["slack"] and health["webhook"]
    body = json.dumps({"type": "url_verification", "challenge": "abc123"}).encode()
    with server.client() as client:
        answer = client.post("/slack/events", content=body, headers=slack_headers(SECRET, body))
    assert answer.status_code == 200 and answer.json() == {"challenge": "abc123"}


def test_messages_are_answered_in_their_threads_with_per_thread_memory(
    helpdesk: tuple[Served, FakeSlack],
) -> None:
    server, slack = helpdesk
    before = len(slack.posts)
    first = message_event("Ev1", "<@UBOT> remember: thread one uses the blue runbook", ts="100.1")
    second = message_event("Ev2", "remember: thread two uses the red runbook", ts="200.1")
    for body in (first, second):
        assert post_event(server, body, **slack_headers(SECRET, body)) == 200
    posts = slack.wait_for_posts(before + 2)[before:]
    assert sorted(post["thread_ts"] for post in posts) == ["100.1", "200.1"]
    assert all(post["channel"] == "C100" for post in posts)
    by_thread = {post["thread_ts"]: post["text"] for post in posts}
    assert "blue runbook" in by_thread["100.1"] and "red runbook" in by_thread["200.1"]
    assert slack.tokens[-1] == f"Bearer {BOT_TOKEN}"

    # A reply in thread 100.1 continues that thread's session (one log per thread).
    follow = message_event("Ev3", "what runbook?", ts="100.2", thread_ts="100.1")
    assert post_event(server, follow, **slack_headers(SECRET, follow)) == 200
    [reply] = slack.wait_for_posts(before + 3)[before + 2 :]
    assert reply["thread_ts"] == "100.1"
    said = {log: user_messages_in(log) for log in session_logs(server)}
    [thread_one] = [texts for texts in said.values() if "what runbook?" in texts]
    # The mention of the bot is not part of what was said.
    assert thread_one[:2] == ["remember: thread one uses the blue runbook", "what runbook?"]
    [thread_two] = [
        texts for texts in said.values() if "remember: thread two uses the red runbook" in texts
    ]
    assert "what runbook?" not in thread_two


def test_a_retried_event_runs_once(helpdesk: tuple[Served, FakeSlack]) -> None:
    server, slack = helpdesk
    before = len(slack.posts)
    body = message_event("EvRetry", "remember: the retry fact", ts="300.1")
    assert post_event(server, body, **slack_headers(SECRET, body)) == 200
    retry_headers = {**slack_headers(SECRET, body), "x-slack-retry-num": "1"}
    assert post_event(server, body, **retry_headers) == 200
    # The same message delivered again as an app_mention (another event id, the same ts).
    mention = json.loads(body)
    mention["event_id"] = "EvRetryMention"
    mention["event"]["type"] = "app_mention"
    again = json.dumps(mention).encode()
    assert post_event(server, again, **slack_headers(SECRET, again)) == 200
    slack.wait_for_posts(before + 1)
    time.sleep(1.0)  # a second (wrong) answer would have arrived by now
    assert len(slack.posts) == before + 1
    assert user_messages(server).count("remember: the retry fact") == 1


def test_forged_stale_and_bot_events_are_refused_and_store_nothing(
    helpdesk: tuple[Served, FakeSlack],
) -> None:
    server, slack = helpdesk
    before_posts = len(slack.posts)
    forged = message_event("EvForged", "remember: forged", ts="400.1")
    assert post_event(server, forged, **slack_headers("not-the-secret", forged)) == 401
    stale = message_event("EvStale", "remember: stale", ts="400.2")
    old = int(time.time()) - 6 * 60
    assert post_event(server, stale, **slack_headers(SECRET, stale, timestamp=old)) == 401
    unsigned = message_event("EvUnsigned", "remember: unsigned", ts="400.3")
    assert post_event(server, unsigned, **{"content-type": "application/json"}) == 401
    tampered_headers = slack_headers(SECRET, forged)
    tampered = forged.replace(b"forged", b"tampered")
    assert post_event(server, tampered, **tampered_headers) == 401
    from_bot = message_event("EvBot", "remember: from a bot", ts="400.4", bot_id="B9")
    assert post_event(server, from_bot, **slack_headers(SECRET, from_bot)) == 200
    from_self = message_event("EvSelf", "remember: from myself", ts="400.5", user="UBOT")
    assert post_event(server, from_self, **slack_headers(SECRET, from_self)) == 200
    time.sleep(1.0)
    assert len(slack.posts) == before_posts
    said = " ".join(user_messages(server))
    for text in ("forged", "stale", "unsigned", "tampered", "from a bot", "from myself"):
        assert text not in said


def test_the_webhook_answers_with_the_reply_and_session(helpdesk: tuple[Served, FakeSlack]) -> None:
    server, _ = helpdesk
    auth = {"authorization": f"Bearer {WEBHOOK_TOKEN}"}
    with server.client(headers=auth) as client:
        first = client.post(
            "/v1/turns",
            json={"conversation": "ticket-9", "text": "remember: ticket nine is urgent"},
        )
        second = client.post(
            "/v1/turns", json={"conversation": "ticket-9", "user": "ana", "text": "hello again"}
        )
    assert first.status_code == 200, first.text
    assert "ticket nine is urgent" in first.json()["reply"]
    assert second.json()["session_id"] == first.json()["session_id"]
    assert second.json()["session_id"].startswith("sess_")


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
    helpdesk: tuple[Served, FakeSlack],
    headers: dict[str, str] | None,
    body: dict[str, object] | bytes,
    status: int,
    says: str,
) -> None:
    server, _ = helpdesk
    sent_headers = {"authorization": f"Bearer {WEBHOOK_TOKEN}"} if headers is None else headers
    before = user_messages(server)
    with server.client() as client:
        if isinstance(body, bytes):
            response = client.post("/v1/turns", content=body, headers=sent_headers)
        else:
            response = client.post("/v1/turns", json=body, headers=sent_headers)
    assert response.status_code == status
    assert says.lower() in response.json()["error"].lower()
    assert user_messages(server) == before


def test_concurrent_conversations_each_keep_their_order(helpdesk: tuple[Served, FakeSlack]) -> None:
    server, _ = helpdesk
    auth = {"authorization": f"Bearer {WEBHOOK_TOKEN}"}
    jobs = [(f"load-{n % 5}", f"remember: load item {n}") for n in range(20)]

    def send(job: tuple[str, str]) -> int:
        with server.client(headers=auth) as client:
            response = client.post("/v1/turns", json={"conversation": job[0], "text": job[1]})
        return response.status_code

    with ThreadPoolExecutor(max_workers=20) as pool:
        assert list(pool.map(send, jobs)) == [200] * 20
    said = user_messages(server)
    assert all(f"remember: load item {n}" in said for n in range(20))
    for log in session_logs(server):
        events = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
        assert [event["seq"] for event in events] == list(range(1, len(events) + 1))
        turns = [e["payload"]["turn"] for e in events if e["type"] == "user_message"]
        assert turns == sorted(turns)


def test_a_webhook_conversation_cannot_name_a_slack_thread(
    helpdesk: tuple[Served, FakeSlack],
) -> None:
    server, slack = helpdesk
    before = len(slack.posts)
    body = message_event(
        "EvPrivate",
        "plan: private payroll: rotate PAYROLLSTEP; notify",
        ts="900.1",
        channel="CPRIV",
    )
    assert post_event(server, body, **slack_headers(SECRET, body)) == 200
    slack.wait_for_posts(before + 1)
    auth = {"authorization": f"Bearer {WEBHOOK_TOKEN}"}
    with server.client(headers=auth) as client:
        answer = client.post(
            "/v1/turns", json={"conversation": "slack:T1:CPRIV:900.1", "text": "call PlanRead {}"}
        )
    assert answer.status_code == 200
    assert "PAYROLLSTEP" not in answer.text and "payroll" not in answer.text
