"""Resolution: continuity defaults per target, memory on/off, aliases, channel settings."""

from __future__ import annotations

import pytest

from specwire.ir import TARGETS, IrSpec, load_spec_text, lower
from specwire.ir.constants import TTL_MAX_DAYS
from specwire.ir.model import IrChannelSpec, IrContinuity, IrCrew, IrMemory, IrMemoryWiki, SecretRef
from specwire.runtime.facts.inputs import MAX_TTL_DAYS

AGENT = "agent: {model: scripted, instructions: i}\n"
HEADERS: dict[str, str] = {
    "cli": "name: s\ntarget: cli\n" + AGENT,
    "channel": "name: s\ntarget: channel\n"
    + AGENT
    + "channels: {slack: {token: $SLACK}}\nrouting: {sessionKey: thread}\n",
    "managed": "name: s\ntarget: managed\n" + AGENT + "tenants: [{id: acme}]\n",
    "research": "name: s\ntarget: research\n"
    + AGENT
    + "goal: g\nbranchingFactor: 2\nmaxDurationMs: 1000\n",
    "crew": "name: s\ntarget: crew\nmodel: scripted\nentry: a\nroles: {a: {instructions: x}}\n",
}
AUTO_SCOPE = {
    "cli": "spec",
    "channel": "session",
    "managed": "audience",  # the person's: the request's user, else its session (issue 21)
    "research": "spec",
    "crew": "spec",
}


def load(text: str) -> IrSpec:
    return load_spec_text(text, "spec.yaml")


def test_every_target_has_a_header() -> None:
    assert set(HEADERS) == set(TARGETS)


# -- continuity ---------------------------------------------------------------------------


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize(
    "block",
    ["", "continuity: true\n", "continuity:\n", "continuity: {}\n", "continuity: {scope: auto}\n"],
    ids=["absent", "true", "no-value", "empty", "auto"],
)
def test_continuity_is_on_by_default_with_auto_scope(target: str, block: str) -> None:
    ir = load(HEADERS[target] + block)
    assert ir.continuity == IrContinuity(
        plan=True, proof="ladder", ledger=True, handoff=True, scope=AUTO_SCOPE[target]
    )


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize(
    "block",
    [
        "continuity: false\n",
        "continuity: {enabled: false}\n",
        "continuity: {enabled: false, proof: off}\n",
    ],
    ids=["false", "enabled-false", "enabled-false-with-knobs"],
)
def test_continuity_switched_off(target: str, block: str) -> None:
    assert load(HEADERS[target] + block).continuity is None


@pytest.mark.parametrize("target", TARGETS)
def test_explicit_spec_scope_is_allowed_everywhere(target: str) -> None:
    ir = load(HEADERS[target] + "continuity: {scope: spec}\n")
    assert ir.continuity is not None and ir.continuity.scope == "spec"


@pytest.mark.parametrize("target", ["channel", "managed"])
def test_explicit_session_scope_on_the_session_routed_targets(target: str) -> None:
    ir = load(HEADERS[target] + "continuity: {scope: session}\n")
    assert ir.continuity is not None and ir.continuity.scope == "session"


def test_managed_continuity_follows_the_person_and_needs_a_version_7_runtime() -> None:
    # auto: per person (a version-6 runtime would keep it in the tenant's folder, shared by
    # every user); spec: the tenant-wide working memory of before, on the version it had.
    person = lower(load(HEADERS["managed"]))
    assert person.continuity is not None and person.continuity.scope == "audience"
    assert person.version == 7
    tenant_wide = lower(load(HEADERS["managed"] + "continuity: {scope: spec}\n"))
    assert tenant_wide.continuity is not None and tenant_wide.continuity.scope == "spec"
    assert tenant_wide.version == 4


def test_continuity_knobs_are_carried() -> None:
    ir = load(
        HEADERS["cli"]
        + "continuity:\n  enabled: true\n  plan: false\n  proof: require\n  ledger: false\n"
        "  handoff: false\n  focus_max_chars: 300\n"
    )
    assert ir.continuity == IrContinuity(
        plan=False, proof="require", ledger=False, handoff=False, scope="spec", focus_max_chars=300
    )


# -- memory -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "block",
    ["", "memory: {enabled: false}\n", "memory:\n  enabled: false\n  recallK: 9\n"],
    ids=["absent", "enabled-false", "enabled-false-with-knobs"],
)
def test_memory_off(block: str) -> None:
    assert load(HEADERS["cli"] + block).memory is None


@pytest.mark.parametrize("block", ["memory: {}\n", "memory:\n"], ids=["empty", "no-value"])
def test_memory_block_present_means_on_with_nothing_declared(block: str) -> None:
    # Decision: `memory:` without a value is the same as `memory: {}` (the block is present).
    assert load(HEADERS["cli"] + block).memory == IrMemory()


def test_memory_fields_resolved() -> None:
    ir = load(
        HEADERS["cli"] + "memory:\n  enabled: true\n  backend: file\n  ttl: 36h\n"
        "  autoCapture: true\n  autoCaptureThreshold: 3\n  autoRecall: false\n  recallK: 50\n"
        "  wiki:\n    enabled: false\n    recallK: 1\n"
        "    autoRecall: true\n    requireSources: true\n"
    )
    assert ir.memory == IrMemory(
        enabled=True,
        backend="file",
        ttl_ms=36 * 3_600_000,
        auto_capture=True,
        auto_capture_threshold=3,
        auto_recall=False,
        recall_k=50,
        wiki=IrMemoryWiki(
            enabled=False,
            recall_k=1,
            auto_recall=True,
            require_sources=True,
        ),
    )


@pytest.mark.parametrize(
    ("ttl", "millis"),
    [
        ("1h", 3_600_000),
        ("60m", 3_600_000),
        ("3600s", 3_600_000),
        ("3600000ms", 3_600_000),
        ("90d", 90 * 86_400_000),
        ("3650d", 3650 * 86_400_000),
        ("00001h", 3_600_000),
        ("315360000000ms", 3650 * 86_400_000),
    ],
)
def test_ttl_units(ttl: str, millis: int) -> None:
    ir = load(HEADERS["cli"] + f"memory: {{ttl: {ttl}}}\n")
    assert ir.memory is not None and ir.memory.ttl_ms == millis


def test_ttl_ceiling_is_the_remember_tools_cap() -> None:
    assert TTL_MAX_DAYS == MAX_TTL_DAYS


def test_wiki_without_value_is_an_empty_wiki_block() -> None:
    assert load(HEADERS["cli"] + "memory:\n  wiki:\n").memory == IrMemory(wiki=IrMemoryWiki())
    ir = load(HEADERS["cli"] + "memory:\n  wiki: {enabled: false}\n")
    assert ir.memory == IrMemory(wiki=IrMemoryWiki(enabled=False))


# -- spellings ----------------------------------------------------------------------------


def test_camel_and_snake_case_give_identical_ir() -> None:
    camel = (
        "name: s\ntarget: research\nagent: {model: scripted, instructions: i}\ngoal: g\n"
        "branchingFactor: 2\nmaxDurationMs: 10\nretrieve: {allowedOrigins: [https://a.example]}\n"
        "memory:\n  autoRecall: true\n  recallK: 3\n  autoCapture: true\n"
        "  autoCaptureThreshold: 2\n"
        "  wiki: {enabled: false, recallK: 4, autoRecall: false, requireSources: true}\n"
        "continuity: {focusMaxChars: 10}\n"
    )
    snake = (
        "name: s\ntarget: research\nagent: {model: scripted, instructions: i}\ngoal: g\n"
        "branching_factor: 2\nmax_duration_ms: 10\nretrieve: {allowed_origins: [https://a.example]}\n"
        "memory:\n  auto_recall: true\n  recall_k: 3\n  auto_capture: true\n"
        "  auto_capture_threshold: 2\n"
        "  wiki: {enabled: false, recall_k: 4, auto_recall: false, require_sources: true}\n"
        "continuity: {focus_max_chars: 10}\n"
    )
    assert load(camel) == load(snake)
    assert lower(load(camel)).to_json() == lower(load(snake)).to_json()


def test_snake_case_target_specific_keys() -> None:
    ir = load(
        "name: s\ntarget: channel\nagent: {model: scripted, instructions: i}\n"
        "channels: {slack: {a: b}}\nrouting: {session_key: user}\n"
    )
    assert isinstance(ir, IrChannelSpec) and ir.session_key == "user"
    managed = load(
        "name: s\ntarget: managed\nagent: {model: scripted, instructions: i}\n"
        "tenants: [{id: a, budget: {max_input_tokens: 5, max_output_tokens: 6}}]\n"
    )
    assert managed.model_dump()["tenants"][0]["budget"] == {
        "max_input_tokens": 5,
        "max_output_tokens": 6,
    }


# -- channel settings ---------------------------------------------------------------------


def test_channels_and_settings_are_sorted_and_secrets_recognized() -> None:
    ir = load(
        "name: s\ntarget: channel\nagent: {model: scripted, instructions: i}\n"
        "channels:\n"
        "  teams:\n    tenant: contoso\n"
        "  slack:\n    signingSecret: $SLACK_SIGNING\n    botToken: $SLACK_BOT_2\n"
        "    retries: 3\n    verbose: true\n    ratio: 0.5\n    greeting: hi $USER\n"
        "routing: {sessionKey: channel}\n"
    )
    assert isinstance(ir, IrChannelSpec)
    assert [channel.name for channel in ir.channels] == ["slack", "teams"]
    assert ir.channels[0].settings == (
        ("botToken", SecretRef(env="SLACK_BOT_2")),
        ("greeting", "hi $USER"),
        ("ratio", 0.5),
        ("retries", 3),
        ("signingSecret", SecretRef(env="SLACK_SIGNING")),
        ("verbose", True),
    )
    assert ir.channels[1].settings == (("tenant", "contoso"),)


def test_dollar_strings_in_free_text_stay_strings() -> None:
    ir = load("name: s\ntarget: cli\nagent: {model: scripted, instructions: $lower}\n")
    assert ir.model_dump()["agent"] == {"model": "scripted", "instructions": "$lower"}


@pytest.mark.parametrize("target", ["cli", "channel", "managed", "research"])
def test_agent_model_may_be_a_secret_reference(target: str) -> None:
    ir = load(HEADERS[target].replace("model: scripted,", "model: $MODEL_ID,"))
    assert ir.model_dump()["agent"]["model"] == {"env": "MODEL_ID"}
    assert load(HEADERS[target]).model_dump()["agent"]["model"] == "scripted"


def test_crew_and_role_models_may_be_secret_references() -> None:
    ir = load(
        "name: s\ntarget: crew\nmodel: $CREW_MODEL\nentry: a\n"
        "roles:\n  a: {instructions: x, model: $ROLE_A_MODEL}\n  b: {instructions: y}\n"
        "  c: {instructions: z, model: scripted/c}\n"
    )
    assert isinstance(ir, IrCrew)
    assert ir.model == SecretRef(env="CREW_MODEL")
    assert [role.model for role in ir.roles] == [
        SecretRef(env="ROLE_A_MODEL"),
        None,
        "scripted/c",
    ]


def test_role_model_pool_and_fallbacks_resolve_in_order() -> None:
    ir = load(
        "name: s\ntarget: crew\nmodel: scripted\nentry: a\nroles:\n"
        "  a: {instructions: x, modelPool: [scripted/b, $POOL_MODEL, scripted/a]}\n"
        "  b:\n    instructions: y\n    model: scripted/failing\n"
        "    model_fallbacks: [scripted, $FALLBACK_MODEL]\n"
        "  c: {instructions: z}\n"
    )
    assert isinstance(ir, IrCrew)
    a, b, c = ir.roles
    assert a.model is None
    assert a.model_pool == ("scripted/b", SecretRef(env="POOL_MODEL"), "scripted/a")
    assert a.model_fallbacks == ()
    assert b.model == "scripted/failing" and b.model_pool == ()
    assert b.model_fallbacks == ("scripted", SecretRef(env="FALLBACK_MODEL"))
    assert (c.model, c.model_pool, c.model_fallbacks) == (None, (), ())


def test_tools_keep_declaration_order() -> None:
    assert load(HEADERS["cli"] + "tools: [write, bash, ls]\n").tools == ("write", "bash", "ls")


def test_version_zero_and_name_with_punctuation() -> None:
    ir = load("name: 'team.bot: v2_final-1'\nversion: 0\ntarget: cli\n" + AGENT)
    assert (ir.name, ir.version) == ("team.bot: v2_final-1", 0)


@pytest.mark.parametrize("name", [".a", "a.", "...x...", "a b", "-", "_", ":", "x"])
def test_names_that_can_name_a_directory(name: str) -> None:
    assert load(f"name: '{name}'\ntarget: cli\n" + AGENT).name == name


def test_managed_offers_every_fenceable_tool() -> None:
    ir = load(HEADERS["managed"] + "tools: [grep, ls, read, write]\n")
    assert ir.tools == ("grep", "ls", "read", "write")
