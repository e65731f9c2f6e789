"""Two users of one managed tenant (the request's ``user`` field), seen from the outside: what one
of them leaves in the agent's working memory must not reach the other (issue 21: "a managed
service knows the OpenAI ``user`` of a request but every user of a tenant shares one memory").

Facts are scoped (tests/e2e/test_memory_scopes_managed_crew.py). Continuity is not: on the
managed target focus, plans, goals and the handoff are the tenant's, shared by every user, and
``continuity.scope: session`` is refused for managed (ir/checks.py ``_session_scope``). Review
finding H7-1, left open (the fix needs a session router for managed continuity).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest
from inprocess_serving import example_agent, serve_app, stores_kept_open
from starlette.testclient import TestClient

KEY = "sk-acme-0123456789abcdef0123"
MODEL = "managed-concierge"


@pytest.fixture(scope="module")
def concierge_agent() -> ModuleType:
    return example_agent(MODEL)


@pytest.fixture
def concierge(
    concierge_agent: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[TestClient]:
    monkeypatch.setenv("SPECWIRE_TENANT_KEY_TENANT_ACME", KEY)
    app, _ = serve_app(concierge_agent, tmp_path / "work", monkeypatch, "managed")
    with stores_kept_open(), TestClient(app) as client:
        yield client


def say(http: TestClient, user: str, session: str, text: str) -> str:
    answer = http.post(
        "/v1/chat/completions",
        headers={"authorization": f"Bearer {KEY}", "X-Session-Id": session},
        json={"model": MODEL, "user": user, "messages": [{"role": "user", "content": text}]},
    )
    assert answer.status_code == 200, answer.text
    return str(answer.json()["choices"][0]["message"]["content"])


def test_one_users_focus_and_plan_never_reach_another_user_of_the_tenant(
    concierge: TestClient,
) -> None:
    assert "focus updated" in say(concierge, "ana", "s1", "focus: ana's sick-leave paperwork")
    assert "created plan" in say(concierge, "ana", "s1", "plan: Ana's lawyer: collect; call")
    seen_by_bob = [
        say(concierge, "bob", "s9", "call FocusRead {}"),
        say(concierge, "bob", "s9", "call PlanRead {}"),
        say(concierge, "bob", "s9", "hello"),  # the plan tail and handoff are in the prompt
    ]
    for reply in seen_by_bob:
        assert "sick-leave" not in reply and "lawyer" not in reply and "collect" not in reply


def test_a_user_and_a_session_at_their_longest_are_served(concierge: TestClient) -> None:
    # Review finding H7-5: both are 1-200 characters, but the conversation key "<user>/<id>"
    # (401) was longer than a scope subject could be (256): a valid request failed with 500
    # (and the official client, told to retry a 5xx, sent it three times).
    user, session = "u" * 200, "s" * 200
    assert "remembered" in say(concierge, user, session, "remember: the long-named guest")
    assert "long-named guest" in say(concierge, user, session, "recall: long-named")
