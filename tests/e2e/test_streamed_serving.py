"""Built bundles served over a socket, streaming: the official openai client reading a long
answer as it is written, a client that disconnects mid-answer, the webhook's events and a Slack
reply updated while it is written. The scripted model streams one word every
``SPECWIRE_SCRIPTED_WORD_DELAY`` seconds, so a client can act between the first word and the
last."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator

import httpx
import openai
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

pytestmark = pytest.mark.e2e

ACME_KEY = "sk-acme-0123456789abcdef0123"
MODEL = "managed-concierge"
SECRET = "slack-signing-secret-for-tests"
WEBHOOK_TOKEN = "webhook-token-0123456789abcdef"
WORD_DELAY_S = "0.05"
LONG = " ".join(f"w{n}" for n in range(30))  # the scripted model echoes 200 chars


@pytest.fixture(scope="module")
def concierge(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    base = tmp_path_factory.mktemp("streamed-concierge")
    agent = build_bundle(ROOT / "examples" / f"{MODEL}.yaml", base / "out")
    env = clean_env(
        SPECWIRE_TENANT_KEY_TENANT_ACME=ACME_KEY, SPECWIRE_SCRIPTED_WORD_DELAY=WORD_DELAY_S
    )
    with served(agent, base / "work", env) as server:
        yield server
    assert "Traceback" not in server.stderr


def session_events(server: Served, session_key: str) -> list[dict[str, object]]:
    """The events of the one session log whose sessionKey is ``session_key``."""
    found = []
    for log in sorted(server.workdir.rglob("sessions/sess_*.jsonl")):
        events = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
        start = events[0]["payload"]
        if start.get("sessionKey") == session_key:
            found.append(events)
    [events] = found
    return events


def wait_for(check: Callable[[], bool], timeout_s: float = 60.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not check():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def test_the_official_client_receives_a_long_answer_as_it_is_written(concierge: Served) -> None:
    client = openai.OpenAI(
        base_url=f"{concierge.url}/v1",
        api_key=ACME_KEY,
        max_retries=0,
        default_headers={"X-Session-Id": "long-e2e"},
    )
    stream = client.chat.completions.create(
        model=MODEL, messages=[{"role": "user", "content": LONG}], stream=True
    )
    deltas = [
        chunk.choices[0].delta.content
        for chunk in stream
        if chunk.choices and chunk.choices[0].delta.content
    ]
    assert len(deltas) >= 10
    plain = client.chat.completions.create(
        model=MODEL, messages=[{"role": "user", "content": LONG}]
    )
    assert "".join(deltas) == plain.choices[0].message.content


def test_a_client_that_disconnects_mid_answer_stops_the_turn_and_the_session_goes_on(
    concierge: Served,
) -> None:
    body = {
        "model": MODEL,
        "messages": [{"role": "user", "content": f"remember: the vault code is 8080 {LONG}"}],
        "stream": True,
    }
    headers = {"authorization": f"Bearer {ACME_KEY}", "x-session-id": "gone"}
    seen = ""
    with (
        httpx.Client(base_url=concierge.url, timeout=60) as http,
        http.stream("POST", "/v1/chat/completions", json=body, headers=headers) as response,
    ):
        assert response.status_code == 200
        for line in response.iter_lines():
            if line.startswith("data: {"):
                seen += json.loads(line[6:])["choices"][0]["delta"].get("content") or ""
            if " w3 " in seen:
                break  # leave mid-answer: the connection closes
    # The turn stops and its session ends: a whole log, the fact remembered once.
    wait_for(lambda: session_events(concierge, "gone")[-1]["type"] == "session_end")
    events = session_events(concierge, "gone")
    assert [e["type"] for e in events].count("user_message") == 1
    assert sum(1 for e in events if e["type"] == "tool_use") == 1  # Remember ran once
    answers = [e["payload"] for e in events if e["type"] == "assistant_message"]
    assert len(answers) <= 1
    if answers:  # recorded as the cancelled turn it was, never as the whole answer
        assert "w29" not in str(answers[0]["text"])  # type: ignore[index]
    # The conversation goes on: the next turn runs and recalls the fact (stored once).
    client = openai.OpenAI(
        base_url=f"{concierge.url}/v1",
        api_key=ACME_KEY,
        max_retries=0,
        default_headers={"X-Session-Id": "gone"},
    )
    later = client.chat.completions.create(
        model=MODEL, messages=[{"role": "user", "content": "recall: vault code"}]
    )
    recalled = later.choices[0].message.content or ""
    assert recalled.count("vault code is 8080") == 1, recalled


# -- the channel bot ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def helpdesk(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Served, FakeSlack]]:
    base = tmp_path_factory.mktemp("streamed-helpdesk")
    agent = build_bundle(ROOT / "examples" / "channel-helpdesk.yaml", base / "out")
    with fake_slack() as slack:
        env = clean_env(
            HELPDESK_SLACK_SIGNING_SECRET=SECRET,
            HELPDESK_SLACK_BOT_TOKEN="xoxb-test-bot-token-000000000000",
            HELPDESK_WEBHOOK_TOKEN=WEBHOOK_TOKEN,
            SPECWIRE_SLACK_API_URL=slack.url,
            SPECWIRE_SCRIPTED_WORD_DELAY=WORD_DELAY_S,
        )
        with served(agent, base / "work", env) as server:
            yield server, slack
        assert "Traceback" not in server.stderr


def test_a_slack_reply_is_posted_at_its_first_words_and_updated_to_the_end(
    helpdesk: tuple[Served, FakeSlack],
) -> None:
    server, slack = helpdesk
    before = len(slack.posts)
    body = message_event("EvLong", LONG, ts="500.1")
    with server.client() as client:
        assert client.post("/slack/events", content=body, headers=slack_headers(SECRET, body))
    [post] = slack.wait_for_posts(before + 1)[before:]
    shown = [str(text) for text in post["shown"]]
    assert post["text"] == f"Noted: {LONG}."
    # 30 words at 50 ms: about 1.5 s of writing, shown in a first post and updates.
    assert len(shown) >= 3 and all(text.endswith("…_") for text in shown[:-1])
    assert [method for method, _, _ in slack.calls].count("chat.postMessage") >= 1


def test_the_webhook_streams_server_sent_events(helpdesk: tuple[Served, FakeSlack]) -> None:
    server, _ = helpdesk
    headers = {"authorization": f"Bearer {WEBHOOK_TOKEN}", "accept": "text/event-stream"}
    texts: list[str] = []
    done: dict[str, object] = {}
    with (
        server.client() as client,
        client.stream(
            "POST", "/v1/turns", json={"conversation": "e2e", "text": LONG}, headers=headers
        ) as response,
    ):
        event = ""
        for line in response.iter_lines():
            if line.startswith("event: "):
                event = line[7:]
            elif line.startswith("data: ") and event == "text":
                texts.append(json.loads(line[6:])["text"])
            elif line.startswith("data: ") and event == "done":
                done = json.loads(line[6:])
    assert len(texts) >= 10 and "".join(texts) == done["reply"] == f"Noted: {LONG}."
