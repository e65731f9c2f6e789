"""Lowering copies only what the user declared; the fragment survives a JSON round trip."""

from __future__ import annotations

import json

import pytest

from specwire.ir import load_spec_text, lower
from specwire.runtime.core.fragment import (
    PRE_SCOPES_FRAGMENT_VERSION,
    SPECWIRE_VERSION,
    MemoryWiringFragment,
)

CLI = "name: spec-a\ntarget: cli\nagent: {model: scripted, instructions: i}\n"
DEFAULT_CONTINUITY = {"plan": True, "proof": "ladder", "ledger": True, "handoff": True}
# Every fragment names its contract version and the specwire that built it (a cli spec without
# scope keys: the version before scopes).
STAMP = {"version": PRE_SCOPES_FRAGMENT_VERSION, "specwire": SPECWIRE_VERSION}
STAMP_JSON = f'"version":{PRE_SCOPES_FRAGMENT_VERSION},"specwire":"{SPECWIRE_VERSION}"'


def fragment_data(text: str) -> dict[str, object]:
    return lower(load_spec_text(text, "spec.yaml")).to_data()


def test_name_only_gives_spec_name_and_default_continuity() -> None:
    assert fragment_data(CLI) == {
        "spec_name": "spec-a",
        **STAMP,
        "continuity": {**DEFAULT_CONTINUITY, "scope": "spec"},
    }


def test_name_only_without_continuity_gives_just_the_name() -> None:
    fragment = lower(load_spec_text(CLI + "continuity: false\n", "spec.yaml"))
    assert fragment.to_json() == '{"spec_name":"spec-a",' + STAMP_JSON + "}"
    assert fragment.is_memoryless


def test_empty_memory_block_lowers_to_an_empty_object() -> None:
    fragment = lower(load_spec_text(CLI + "memory: {}\ncontinuity: false\n", "spec.yaml"))
    assert fragment.to_json() == '{"spec_name":"spec-a",' + STAMP_JSON + ',"memory":{}}'
    assert not fragment.is_memoryless


@pytest.mark.parametrize(
    ("block", "memory"),
    [
        ("memory: {recallK: 7}\n", {"recall_k": 7}),
        ("memory: {enabled: true}\n", {"enabled": True}),
        ("memory: {autoRecall: false}\n", {"auto_recall": False}),
        ("memory: {ttl: 2h}\n", {"ttl_ms": 7_200_000}),
        ("memory: {wiki: {enabled: false}}\n", {"wiki": {"enabled": False}}),
        (
            "memory: {backend: file, autoCaptureThreshold: 3}\n",
            {"backend": "file", "auto_capture_threshold": 3},
        ),
    ],
)
def test_only_declared_memory_fields_are_copied(block: str, memory: dict[str, object]) -> None:
    assert fragment_data(CLI + block + "continuity: false\n") == {
        "spec_name": "spec-a",
        **STAMP,
        "memory": memory,
    }


def test_continuity_lowered_as_resolved() -> None:
    data = fragment_data(CLI + "continuity: {proof: off, plan: false, focusMaxChars: 64}\n")
    assert data["continuity"] == {
        **DEFAULT_CONTINUITY,
        "plan": False,
        "proof": "off",
        "scope": "spec",
        "focus_max_chars": 64,
    }


def test_channel_continuity_lowers_with_session_scope() -> None:
    text = (
        "name: bot\ntarget: channel\nagent: {model: scripted, instructions: i}\n"
        "channels: {slack: {}}\nrouting: {sessionKey: thread}\n"
    )
    assert fragment_data(text)["continuity"] == {**DEFAULT_CONTINUITY, "scope": "session"}


def test_fragment_json_round_trip_is_exact() -> None:
    text = (
        CLI + "memory:\n  ttl: 90d\n  recallK: 5\n  autoCapture: true\n  autoCaptureThreshold: 2\n"
        "  wiki: {enabled: false, recallK: 6, requireSources: true}\n"
        "continuity: {proof: require, focusMaxChars: 100}\n"
    )
    fragment = lower(load_spec_text(text, "spec.yaml"))
    again = MemoryWiringFragment.from_json(fragment.to_json())
    assert again == fragment
    assert again.to_json() == fragment.to_json()
    assert json.loads(fragment.to_json()) == fragment.to_data()


def test_every_way_of_switching_memory_off_gives_the_same_fragment() -> None:
    texts = [
        CLI + "continuity: false\n",
        CLI + "memory: {enabled: false}\ncontinuity: {enabled: false}\n",
        CLI
        + "memory:\n  enabled: false\n  recallK: 3\ncontinuity:\n  enabled: false\n  proof: off\n",
    ]
    assert {lower(load_spec_text(text, "spec.yaml")).to_json() for text in texts} == {
        '{"spec_name":"spec-a",' + STAMP_JSON + "}"
    }


def test_wiki_knobs_lower_only_when_declared() -> None:
    text = CLI + "memory:\n  wiki: {recallK: 3, requireSources: true, autoRecall: true}\n"
    data = lower(load_spec_text(text, "spec.yaml")).to_data()
    assert data["memory"] == {"wiki": {"recall_k": 3, "require_sources": True, "auto_recall": True}}
    bare = lower(load_spec_text(CLI + "memory:\n  wiki: {}\n", "spec.yaml")).to_data()
    assert bare["memory"] == {"wiki": {}}


def test_check_refuses_what_the_runtime_cannot_wire() -> None:
    from specwire.ir.errors import SpecError

    for block, where, why in [
        (
            "memory: {embedder: hash/8}\n",
            "spec.yaml:4:20: memory.embedder: ",
            'bad dimension "8" for the hash embedder: use hash/<dim> with dim from 16 to 4096',
        ),
        (
            "memory: {embedder: word2vec/news}\n",
            "spec.yaml:4:20: memory.embedder: ",
            'unknown embedder provider "word2vec": known providers: hash, local, mock, '
            "openai, openai-compatible",
        ),
    ]:
        with pytest.raises(SpecError) as refused:
            load_spec_text(CLI + block, "spec.yaml")
        assert str(refused.value).startswith(where), str(refused.value)
        assert why in str(refused.value)


# -- CrewHaus 0.4 memory keys (issue 12) ------------------------------------------------------

CREWHAUS_04 = """\
memory:
  autoRecall: per-turn
  refreshEvery: 3
  sessionRecall: true
  recallK: 4
  dream:
    every: 6h
    mode: full
    budget_usd: 0.5
    instructions: merge duplicates
continuity: false
"""


def test_a_crewhaus_04_spec_with_every_memory_key_lowers_each_declared_field() -> None:
    assert fragment_data(CLI + CREWHAUS_04) == {
        "spec_name": "spec-a",
        **STAMP,
        "memory": {
            "auto_recall": True,
            "recall_k": 4,
            "recall_mode": "per-turn",
            "refresh_every": 3,
            "session_recall": True,
            "dream": {
                "every_ms": 6 * 3_600_000,
                "mode": "full",
                "budget_usd": 0.5,
                "instructions": "merge duplicates",
            },
        },
    }


@pytest.mark.parametrize("value", ["true", '"session-start"'])
def test_session_start_recall_lowers_like_true(value: str) -> None:
    """``true`` and ``"session-start"`` are one mode: the bytes of a 0.3 bundle are kept."""
    data = fragment_data(CLI + f"memory: {{autoRecall: {value}}}\ncontinuity: false\n")
    assert data["memory"] == {"auto_recall": True}


def test_dream_lowers_only_what_is_declared() -> None:
    data = fragment_data(CLI + "memory: {dream: {every: 5m}}\ncontinuity: false\n")
    assert data["memory"] == {"dream": {"every_ms": 300_000}}


def test_budgetUsd_is_an_alias_of_budget_usd() -> None:
    data = fragment_data(CLI + "memory: {dream: {every: 1d, budgetUsd: 2}}\ncontinuity: false\n")
    assert data["memory"] == {"dream": {"every_ms": 86_400_000, "budget_usd": 2.0}}


@pytest.mark.parametrize(
    ("block", "state", "version"),
    [
        ("  backend: postgres\n  dsn: $DB\n", "postgres", 6),
        ("  backend: postgres\n  dsn: $DB\n  state: postgres\n", "postgres", 6),
        ("  backend: postgres\n  dsn: $DB\n  state: files\n", None, 3),
        ("  backend: file\n  state: files\n", None, 3),
        ("  recallK: 4\n", None, 3),
    ],
)
def test_state_follows_the_facts_into_postgres_unless_kept_in_files(
    block: str, state: str | None, version: int
) -> None:
    fragment = lower(load_spec_text(CLI + "memory:\n" + block, "spec.yaml"))
    assert fragment.memory is not None
    assert fragment.memory.state == state
    assert fragment.version == version


def test_no_public_name_of_the_package_is_also_a_submodule() -> None:
    """Importing a submodule sets the package attribute of its name: a lazily exported function
    sharing that name would turn into the module for every later ``from specwire.ir import``."""
    import pkgutil

    import specwire.ir as ir_package

    submodules = {info.name for info in pkgutil.iter_modules(ir_package.__path__)}
    assert submodules.isdisjoint(ir_package.__all__)
