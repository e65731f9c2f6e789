"""Two users of one managed tenant (the request's ``user`` field), seen from the outside: what one
of them leaves in the agent's working memory must not reach the other (issue 21: "a managed
service knows the OpenAI ``user`` of a request but every user of a tenant shares one memory").

Facts are scoped (tests/e2e/test_memory_scopes_managed_crew.py). So is continuity (review
finding H7-1): ``continuity.scope: auto`` on managed keeps focus, plans, goals and the handoff
per person, the request's ``user``, else per session (``X-Session-Id``); the layout's
``audience_state_dir``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest
from inprocess_serving import ask_as, example_agent, serve_app, stores_kept_open
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


def say(http: TestClient, user: str | None, session: str, text: str) -> str:
    return ask_as(http, KEY, MODEL, user, session, text)


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


def test_a_person_finds_their_plan_again_in_another_session(concierge: TestClient) -> None:
    assert "created plan" in say(concierge, "ana", "s1", "plan: Ana's lawyer: collect; call")
    assert "lawyer" in say(concierge, "ana", "s2", "call PlanRead {}")
    assert "Resuming" in say(concierge, "ana", "s3", "hello")  # her handoff, in a new session


def test_two_anonymous_sessions_never_share_a_working_memory(concierge: TestClient) -> None:
    # No ``user``: the session (X-Session-Id) is all the service knows of who is asking.
    assert "focus updated" in say(concierge, None, "kiosk-1", "focus: the kiosk's refund queue")
    assert "refund" in say(concierge, None, "kiosk-1", "call FocusRead {}")
    for reply in (
        say(concierge, None, "kiosk-2", "call FocusRead {}"),
        say(concierge, None, "kiosk-2", "hello"),
        # a user whose id is the anonymous session's key is another person
        say(concierge, "kiosk-1", "kiosk-1", "call FocusRead {}"),
    ):
        assert "refund" not in reply


def test_a_user_and_a_session_at_their_longest_are_served(concierge: TestClient) -> None:
    # Review finding H7-5: both are 1-200 characters, but the conversation key "<user>/<id>"
    # (401) was longer than a scope subject could be (256): a valid request failed with 500
    # (and the official client, told to retry a 5xx, sent it three times).
    user, session = "u" * 200, "s" * 200
    assert "remembered" in say(concierge, user, session, "remember: the long-named guest")
    assert "long-named guest" in say(concierge, user, session, "recall: long-named")
