"""``memory.scope`` and ``memory.tiers``: resolution per target, the fragment version, and the
located errors of scopes a target's host cannot give a subject to."""

from __future__ import annotations

import pytest

from specwire.ir import SpecError, load_spec_text, lower
from specwire.ir.model import IrMemoryScope
from specwire.runtime.core.fragment import (
    PRE_SCOPES_FRAGMENT_VERSION,
    SCOPES_FRAGMENT_VERSION,
)

AGENT = "agent: {model: scripted, instructions: i}\n"
HEADERS: dict[str, str] = {
    "cli": "name: s\ntarget: cli\n" + AGENT,
    "channel": "name: s\ntarget: channel\n"
    + AGENT
    + "channels: {webhook: {token: $HOOK}}\nrouting: {sessionKey: thread}\n",
    "managed": "name: s\ntarget: managed\n" + AGENT + "tenants: [{id: acme}]\n",
    "research": "name: s\ntarget: research\n"
    + AGENT
    + "goal: g\nbranchingFactor: 2\nmaxDurationMs: 1000\n",
    "crew": "name: s\ntarget: crew\nmodel: scripted\nentry: a\nroles: {a: {instructions: x}}\n",
}
AUTO = {"cli": None, "research": None, "channel": "user", "managed": "user", "crew": "role"}


def scope_of(target: str, memory: str) -> IrMemoryScope | None:
    spec = load_spec_text(HEADERS[target] + memory, "spec.yaml")
    assert spec.memory is not None
    return spec.memory.scope


def issues(text: str) -> list[str]:
    with pytest.raises(SpecError) as caught:
        load_spec_text(text, "spec.yaml")
    return [f"{i.line}:{i.col}: {i.key}: {i.message}" for i in caught.value.issues]


@pytest.mark.parametrize("target", sorted(AUTO))
@pytest.mark.parametrize("memory", ["memory: {}\n", "memory: {scope: auto}\n"])
def test_auto_is_the_targets_protective_default(target: str, memory: str) -> None:
    scope = scope_of(target, memory)
    expected = AUTO[target]
    assert (scope.default if scope is not None else None) == expected


@pytest.mark.parametrize(
    ("target", "memory", "default", "follow"),
    [
        ("channel", "memory: {scope: conversation}\n", "conversation", None),
        ("channel", "memory: {scope: agent}\n", "agent", None),
        ("channel", "memory:\n  scope: {default: user, followUser: true}\n", "user", True),
        ("channel", "memory:\n  scope: {default: auto, follow_user: false}\n", "user", False),
        ("managed", "memory: {scope: conversation}\n", "conversation", None),
        ("crew", "memory: {scope: crew}\n", "crew", None),
        ("crew", "memory: {scope: agent}\n", "agent", None),
    ],
)
def test_a_declared_scope_is_carried(
    target: str, memory: str, default: str, follow: bool | None
) -> None:
    assert scope_of(target, memory) == IrMemoryScope(default=default, follow_user=follow)  # type: ignore[arg-type]


@pytest.mark.parametrize("target", ["cli", "research"])
def test_cli_and_research_without_scope_keys_lower_as_before_scopes(target: str) -> None:
    for memory in ("memory: {}\n", "memory: {scope: agent}\n", "memory: {scope: auto}\n"):
        fragment = lower(load_spec_text(HEADERS[target] + memory, "spec.yaml"))
        assert fragment.version == PRE_SCOPES_FRAGMENT_VERSION
        assert "scope" not in fragment.to_json() or '"scope":"spec"' in fragment.to_json()
        assert fragment.memory is not None and fragment.memory.scope is None


def test_tiers_and_the_audience_targets_need_version_4() -> None:
    tiers = lower(load_spec_text(HEADERS["cli"] + "memory: {tiers: true}\n", "spec.yaml"))
    assert tiers.version == SCOPES_FRAGMENT_VERSION and tiers.memory is not None
    assert tiers.memory.tiers is True
    off = lower(load_spec_text(HEADERS["cli"] + "memory: {tiers: false}\n", "spec.yaml"))
    assert off.version == PRE_SCOPES_FRAGMENT_VERSION and off.to_data()["memory"] == {}
    for target in ("channel", "managed", "crew"):
        plain = lower(load_spec_text(HEADERS[target] + "continuity: false\n", "spec.yaml"))
        assert plain.version == SCOPES_FRAGMENT_VERSION, target


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            HEADERS["cli"] + "memory:\n  scope: role\n",
            '5:10: memory.scope: scope "role" is not available on the cli target: role memory '
            "exists only in a crew (the cli target takes auto, which is agent there, or agent)",
        ),
        (
            HEADERS["research"] + "memory:\n  scope: {default: user}\n",
            '8:20: memory.scope.default: scope "user" is not available on the research target: '
            "a person's memory needs a host that knows who is talking (channel, managed) (the "
            "research target takes auto, which is agent there, or agent)",
        ),
        (
            HEADERS["channel"] + "memory:\n  scope: crew\n",
            '7:10: memory.scope: scope "crew" is not available on the channel target: crew '
            "memory exists only in a crew (the channel target takes auto, which is user there, "
            "or user or conversation or agent)",
        ),
        (
            HEADERS["crew"] + "memory:\n  scope: user\n",
            '7:10: memory.scope: scope "user" is not available on the crew target: a person\'s '
            "memory needs a host that knows who is talking (channel, managed) (the crew target "
            "takes auto, which is role there, or role or crew or agent)",
        ),
        (
            HEADERS["managed"] + "memory:\n  scope: {default: user, followUser: true}\n",
            "6:26: memory.scope.followUser: `followUser` lets a person's facts follow them into "
            "shared conversations, which only channel bots have: remove it on the managed target",
        ),
        (
            HEADERS["cli"] + "memory:\n  scope: everyone\n",
            "5:10: memory.scope: expected one of auto, user, conversation, role, agent, crew or "
            'a mapping (got "everyone")',
        ),
        (
            HEADERS["cli"] + "memory:\n  scope: {default: agent, followMe: true}\n",
            '5:27: memory.scope.followMe: unknown key "followMe" (did you mean "followUser"?)',
        ),
        (
            HEADERS["cli"] + "memory:\n  tiers: yes please\n",
            '5:10: memory.tiers: expected true or false (got "yes please")',
        ),
    ],
)
def test_impossible_scopes_are_located(text: str, expected: str) -> None:
    assert issues(text) == [expected]
