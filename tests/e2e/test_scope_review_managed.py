"""Hostile-review regressions on a served managed bundle (official ``openai`` client).

A managed session is one person's conversation (``private``): what one ``user`` said there (and
the facts recalled for them into it) must not reach another ``user`` of the tenant, or a request
naming no user, that sends the same ``X-Session-Id`` (a client-chosen string).
"""

from __future__ import annotations

from collections.abc import Iterator

import openai
import pytest
from serving_support import Served, build_bundle, clean_env, served

pytestmark = pytest.mark.e2e

KEY = "sk-review-0123456789abcdef01234"
SPEC = """\
name: review-concierge
target: managed
agent:
  model: scripted
  instructions: You help the guests.
tenants:
  - id: acme
memory:
  autoRecall: false
"""


@pytest.fixture(scope="module")
def concierge(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    base = tmp_path_factory.mktemp("review-concierge")
    spec = base / "spec.yaml"
    spec.write_text(SPEC, encoding="utf-8")
    agent = build_bundle(spec, base / "out")
    with served(agent, base / "work", clean_env(SPECWIRE_TENANT_KEY_ACME=KEY)) as server:
        yield server
    assert "Traceback" not in server.stderr


def say(server: Served, user: str | None, session: str, text: str) -> str:
    client = openai.OpenAI(
        base_url=f"{server.url}/v1",
        api_key=KEY,
        max_retries=0,
        default_headers={"X-Session-Id": session},
    )
    extra = {"user": user} if user is not None else {}
    completion = client.chat.completions.create(
        model="review-concierge", messages=[{"role": "user", "content": text}], **extra
    )
    return completion.choices[0].message.content or ""


def test_another_user_in_the_same_session_id_does_not_read_the_conversation(
    concierge: Served,
) -> None:
    assert "remembered" in say(concierge, "alice", "shared-1", "remember: my room is 1204")
    # Bob names Alice's session id: the conversation so far (her message, the tool result) is
    # hers, not his.
    bob = say(concierge, "bob", "shared-1", "ask about room: which room is mine?")
    assert "1204" not in bob, bob
    # Nor does a request naming no user read it.
    anonymous = say(concierge, None, "shared-1", "ask about room: which room is mine?")
    assert "1204" not in anonymous, anonymous
    # Alice's own conversation continues.
    assert "1204" in say(concierge, "alice", "shared-1", "ask about room: which room is mine?")
