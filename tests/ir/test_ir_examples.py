"""Every example spec loads, resolves and lowers; spot checks of what they resolve to."""

from __future__ import annotations

from pathlib import Path

import pytest

from specwire.ir import TARGETS, load_spec, lower
from specwire.ir.model import IrChannelSpec, IrCrew, IrManaged, IrResearch, SecretRef
from specwire.runtime.core.fragment import (
    PRE_SCOPES_FRAGMENT_VERSION,
    SPECWIRE_VERSION,
    MemoryWiringFragment,
)

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
EXAMPLE_FILES = sorted(EXAMPLES.glob("*.yaml"))


def test_there_are_examples_for_every_target() -> None:
    targets = {load_spec(path).target for path in EXAMPLE_FILES}
    assert targets == set(TARGETS)


@pytest.mark.parametrize("path", EXAMPLE_FILES, ids=lambda path: path.name)
def test_example_loads_and_lowers(path: Path) -> None:
    ir = load_spec(path)
    fragment = lower(ir)
    assert fragment.spec_name == ir.name
    assert MemoryWiringFragment.from_json(fragment.to_json()) == fragment


@pytest.mark.parametrize("path", EXAMPLE_FILES, ids=lambda path: path.name)
def test_plain_examples_are_memoryless(path: Path) -> None:
    fragment = lower(load_spec(path))
    assert fragment.is_memoryless == path.name.endswith("-plain.yaml")


def test_support_bot_fragment() -> None:
    fragment = lower(load_spec(EXAMPLES / "support-bot.yaml"))
    assert fragment.to_data() == {
        "spec_name": "support-bot",
        "version": PRE_SCOPES_FRAGMENT_VERSION,
        "specwire": SPECWIRE_VERSION,
        "memory": {"ttl_ms": 90 * 86_400_000, "recall_k": 5},
        "continuity": {
            "plan": True,
            "proof": "ladder",
            "ledger": True,
            "handoff": True,
            "scope": "spec",
        },
    }


def test_channel_helpdesk_resolves_secrets_and_session_scope() -> None:
    ir = load_spec(EXAMPLES / "channel-helpdesk.yaml")
    assert isinstance(ir, IrChannelSpec)
    assert ir.session_key == "thread"
    (slack, webhook) = ir.channels
    assert slack.name == "slack"
    assert slack.settings == (
        ("botToken", SecretRef(env="HELPDESK_SLACK_BOT_TOKEN")),
        ("signingSecret", SecretRef(env="HELPDESK_SLACK_SIGNING_SECRET")),
    )
    assert webhook.name == "webhook"
    assert webhook.settings == (("token", SecretRef(env="HELPDESK_WEBHOOK_TOKEN")),)
    assert ir.continuity is not None and ir.continuity.scope == "session"


def test_managed_concierge_tenants_in_declaration_order() -> None:
    ir = load_spec(EXAMPLES / "managed-concierge.yaml")
    assert isinstance(ir, IrManaged)
    assert [tenant.id for tenant in ir.tenants] == ["tenant-acme", "tenant-globex"]
    budget = ir.tenants[0].budget
    assert budget is not None
    assert (budget.max_input_tokens, budget.max_output_tokens) == (2_000_000, 200_000)
    assert ir.tenants[1].budget is None


def test_research_market_keeps_its_shape() -> None:
    ir = load_spec(EXAMPLES / "research-market.yaml")
    assert isinstance(ir, IrResearch)
    assert ir.goal.startswith("Size the market")
    assert (ir.branching_factor, ir.max_duration_ms) == (2, 60_000)
    assert ir.retrieve is not None and ir.retrieve.allowed_origins == ("https://example.org",)
    assert ir.continuity is not None and ir.continuity.focus_max_chars == 2000


def test_crew_newsroom_keeps_role_order_and_proof_off() -> None:
    ir = load_spec(EXAMPLES / "crew-newsroom.yaml")
    assert isinstance(ir, IrCrew)
    assert (ir.model, ir.entry) == ("scripted", "researcher")
    assert [role.name for role in ir.roles] == ["researcher", "writer"]
    # YAML 1.2: `off` is the string "off", not false.
    assert ir.continuity is not None and ir.continuity.proof == "off"
