"""Crewship's memory tools listed in ``tools:`` (``memory.read`` or ``memory_read``) ask for the
tiers: they turn ``memory.tiers`` on, are not builtin tools of the bundle, and need memory."""

from __future__ import annotations

import pytest

from specwire.ir import SpecError, load_spec_text

HEAD = "name: s\ntarget: cli\nagent: {model: scripted, instructions: i}\n"
MANAGED = (
    "name: s\ntarget: managed\nagent: {model: scripted, instructions: i}\ntenants: [{id: acme}]\n"
)


def issues(text: str) -> list[str]:
    with pytest.raises(SpecError) as caught:
        load_spec_text(text, "spec.yaml")
    return [f"{i.line}:{i.col}: {i.message}" for i in caught.value.issues]


@pytest.mark.parametrize(
    "tools",
    [
        "[read, memory.read, memory.write, memory.search, memory.append_daily]",
        "[read, memory_read, memory_search]",
        "[memory.append_daily, read]",
    ],
)
def test_listed_tier_tools_turn_the_tiers_on_and_leave_the_builtin_tools(tools: str) -> None:
    spec = load_spec_text(HEAD + f"tools: {tools}\nmemory: {{}}\n", "spec.yaml")
    assert spec.tools == ("read",)
    assert spec.memory is not None and spec.memory.tiers is True


def test_the_managed_target_accepts_them_too() -> None:
    spec = load_spec_text(MANAGED + "tools: [memory.read]\nmemory: {}\n", "spec.yaml")
    assert spec.tools == () and spec.memory is not None and spec.memory.tiers is True


def test_without_memory_a_tier_tool_is_a_located_error() -> None:
    assert issues(HEAD + "tools: [read, memory.search]\n") == [
        '4:15: "memory.search" is a memory tier tool: it needs a memory block '
        "(memory: {tiers: true})"
    ]


def test_with_memory_switched_off_too() -> None:
    found = issues(HEAD + "tools: [memory_read]\nmemory: {enabled: false}\n")
    assert found == [
        '4:9: "memory_read" is a memory tier tool: it needs a memory block (memory: {tiers: true})'
    ]


def test_tiers_switched_off_contradict_a_listed_tier_tool() -> None:
    found = issues(HEAD + "tools: [memory.write]\nmemory: {tiers: false}\n")
    assert found == ['4:9: "memory.write" is a memory tier tool, but memory.tiers is false']


def test_an_unknown_dotted_name_is_still_refused() -> None:
    found = issues(HEAD + "tools: [memory.delete]\nmemory: {}\n")
    assert len(found) == 1 and "unknown builtin tool" in found[0]
