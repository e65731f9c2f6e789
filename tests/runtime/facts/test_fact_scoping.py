"""The facts tier's scoping: the spec's ``memory.scope`` and the host's audience as write keys,
visible keys and the scopes the model may name, through the real tools and the SQLite store."""

from __future__ import annotations

from typing import Any

import pytest

from specwire.runtime.core.errors import MemoryServiceError
from specwire.runtime.core.fragment import ScopeFragment
from specwire.runtime.core.scopes import AGENT, CREW, Audience, ScopeKey
from specwire.runtime.core.tool_types import Tool, ToolContext, ToolResult
from specwire.runtime.facts.providers.protocol import LocalFactProvider, RetainRequest
from specwire.runtime.facts.scoping import UNSCOPED, FactScoping, fact_scoping
from specwire.runtime.facts.store import FactStore
from specwire.runtime.facts.tools import SNIPPET_CHARS, fact_tools

CTX = ToolContext(session_id="sess_0123456789abcdef", tool_use_id="tu_1")
DM_ALICE = Audience(user="alice", conversation="dm-a", private=True)
GENERAL_ALICE = Audience(user="alice", conversation="general")
GENERAL_BOB = Audience(user="bob", conversation="general")
USER = ScopeFragment(default="user")


def tools_for(store: FactStore, scoping: FactScoping) -> dict[str, Tool]:
    built = fact_tools(LocalFactProvider(store), ttl_ms=None, recall_k=5, scoping=scoping)
    return {tool.name: tool for tool in built}


def call(tools: dict[str, Tool], name: str, **raw: Any) -> ToolResult:
    return tools[name].invoke(raw, CTX)


def test_no_scope_in_the_fragment_is_the_agent_key_whatever_the_audience() -> None:
    assert fact_scoping(None, DM_ALICE) == UNSCOPED
    assert UNSCOPED.write_key == AGENT and UNSCOPED.visible == (AGENT,) and not UNSCOPED.scoped


def test_a_scoped_spec_without_an_audience_fails_closed() -> None:
    with pytest.raises(MemoryServiceError, match="passed no audience"):
        fact_scoping(USER, None)


def test_user_default_writes_to_the_person_in_private_and_the_conversation_in_public() -> None:
    private = fact_scoping(USER, DM_ALICE)
    assert private.write_key == ScopeKey("user", "alice")
    assert private.visible == (AGENT, ScopeKey("conversation", "dm-a"), ScopeKey("user", "alice"))
    assert [name for name, _ in private.choices] == ["user", "conversation"]
    public = fact_scoping(USER, GENERAL_ALICE)
    assert public.write_key == ScopeKey("conversation", "general")
    assert ScopeKey("user", "alice") not in public.visible
    follow = fact_scoping(ScopeFragment(default="user", follow_user=True), GENERAL_ALICE)
    assert ScopeKey("user", "alice") in follow.visible


def test_a_crew_role_may_share_with_the_crew_but_never_with_the_agent() -> None:
    role = fact_scoping(ScopeFragment(default="role"), Audience(role="writer", crew=True))
    assert role.write_key == ScopeKey("role", "writer")
    assert [name for name, _ in role.choices] == ["role", "crew"]
    assert role.key_for("crew") == CREW
    assert role.visible == (AGENT, CREW, ScopeKey("role", "writer"))


def test_remember_offers_only_the_allowed_scopes_and_refuses_wider(store: FactStore) -> None:
    tools = tools_for(store, fact_scoping(USER, DM_ALICE))
    schema = tools["Remember"].input_schema()["properties"]["scope"]
    assert schema["anyOf"][0]["enum"] == ["user", "conversation"]
    wider = call(tools, "Remember", text="everyone should know this", scope="agent")
    assert wider.is_error
    assert store.size() == 0


def test_facts_are_recalled_only_where_their_key_is_visible(store: FactStore) -> None:
    alice_dm = tools_for(store, fact_scoping(USER, DM_ALICE))
    assert not call(alice_dm, "Remember", text="my locker code is 4417").is_error
    public = tools_for(store, fact_scoping(USER, GENERAL_BOB))
    assert not call(public, "Remember", text="the ops standup is at nine").is_error
    store.remember("the office closes at six")  # the owner's agent fact
    bob_general = call(public, "Recall", query="locker standup office").text
    assert "4417" not in bob_general and "at nine" in bob_general and "at six" in bob_general
    alice_general = call(
        tools_for(store, fact_scoping(USER, GENERAL_ALICE)), "Recall", query="locker"
    ).text
    assert "4417" not in alice_general
    back = call(alice_dm, "Recall", query="locker").text
    assert "4417" in back and "(scope user)" in back and "alice" not in back


def test_a_keyed_remember_replaces_and_memory_read_returns_it_whole(store: FactStore) -> None:
    tools = tools_for(store, fact_scoping(USER, DM_ALICE))
    first = call(tools, "Remember", text="prefers tea", key="drink")
    second = call(tools, "Remember", text="prefers coffee", key="drink")
    assert not first.is_error and "replacing mem_" in second.text, second.text
    read = call(tools, "MemoryRead", key="drink").text
    assert "prefers coffee" in read and "prefers tea" not in read
    # Bob's conversation has no fact under Alice's key.
    bob = tools_for(store, fact_scoping(USER, GENERAL_BOB))
    assert call(bob, "MemoryRead", key="drink").text == "no live memory with key 'drink'"


def test_recall_cuts_long_keyed_texts_and_memory_read_does_not(store: FactStore) -> None:
    long = " ".join(["the onboarding checklist"] + [f"step{n}" for n in range(200)])
    tools = tools_for(store, UNSCOPED)
    kept = LocalFactProvider(store).retain(RetainRequest(long, key="checklist"))
    line = call(tools, "Recall", query="onboarding checklist").text.split("\n")[1]
    assert "…" in line and len(line) < SNIPPET_CHARS + 100
    assert long in call(tools, "MemoryRead", id=kept.id).text
