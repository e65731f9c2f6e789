"""Tenant API keys from the environment, and the usage ledger that enforces budgets."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from specwire.runtime.core.errors import ServeConfigError, StoreError
from specwire.runtime.core.fragment import tenant_key_variable
from specwire.runtime.hosts.http.tenant_keys import load_tenant_keys
from specwire.runtime.hosts.http.usage_ledger import (
    TenantUsage,
    UsageLedger,
    budget_problem,
    estimate_input_tokens,
)
from specwire.runtime.hosts.types import TenantConfig
from specwire.runtime.models import Usage

KEY_A = "a" * 16 + "-tenant-a"
KEY_B = "b" * 16 + "-tenant-b"


def test_variables_are_named_after_the_tenant() -> None:
    assert tenant_key_variable("tenant-acme") == "SPECWIRE_TENANT_KEY_TENANT_ACME"
    assert tenant_key_variable("Acme_2") == "SPECWIRE_TENANT_KEY_ACME_2"


def test_each_key_maps_to_its_tenant_only() -> None:
    env = {tenant_key_variable("a"): KEY_A, tenant_key_variable("b"): KEY_B}
    keys, missing = load_tenant_keys(["a", "b", "c"], env)
    assert missing == ["c"]
    assert keys.tenant_for(KEY_A) == "a" and keys.tenant_for(KEY_B) == "b"
    for wrong in ("", KEY_A[:-1], KEY_A + "x", KEY_A.upper(), "c"):
        assert keys.tenant_for(wrong) is None


@pytest.mark.parametrize(
    ("ids", "env", "says"),
    [
        (["a-b", "a_b"], {}, "would share the key variable"),
        (["a"], {tenant_key_variable("a"): "short"}, "too short"),
        (
            ["a", "b"],
            {tenant_key_variable("a"): KEY_A, tenant_key_variable("b"): KEY_A},
            "same API key",
        ),
        (["a"], {}, "no tenant has an API key: set $SPECWIRE_TENANT_KEY_A"),
    ],
)
def test_unusable_key_setups_stop_the_start(ids: list[str], env: dict[str, str], says: str) -> None:
    with pytest.raises(ServeConfigError) as caught:
        load_tenant_keys(ids, env)
    assert says in str(caught.value)
    assert KEY_A not in str(caught.value)


def test_the_ledger_adds_up_and_survives_a_restart(tmp_path: Path) -> None:
    ledger = UsageLedger(tmp_path, "concierge")
    assert ledger.read() == TenantUsage()
    ledger.add(Usage(100, 20, 5))
    ledger.add(Usage(50, 10, 0))
    assert UsageLedger(tmp_path, "concierge").read() == TenantUsage(150, 30, 5, 2)
    assert (tmp_path / "usage" / "concierge.json").stat().st_mode & 0o777 == 0o600


@pytest.mark.parametrize(
    "content",
    ["{not json", "[]", '{"input": -1, "output": 0, "cached": 0, "turns": 0}', '{"input": "9"}'],
)
def test_a_damaged_ledger_fails_closed(tmp_path: Path, content: str) -> None:
    path = tmp_path / "usage" / "concierge.json"
    path.parent.mkdir()
    path.write_text(content, encoding="utf-8")
    with pytest.raises(StoreError, match="damaged"):
        UsageLedger(tmp_path, "concierge").read()
    with pytest.raises(StoreError):
        UsageLedger(tmp_path, "concierge").add(Usage(1, 1, 0))
    assert path.read_text(encoding="utf-8") == content


def test_budgets_stop_the_next_turn_once_reached() -> None:
    tenant = TenantConfig("acme", max_input_tokens=100, max_output_tokens=10)
    assert budget_problem(TenantUsage(99, 9), tenant) is None
    assert "input-token budget (100 of 100)" in (budget_problem(TenantUsage(100, 0), tenant) or "")
    assert "output-token budget (12 of 10)" in (budget_problem(TenantUsage(0, 12), tenant) or "")
    assert budget_problem(TenantUsage(10**9, 10**9), TenantConfig("free")) is None


def test_concurrent_adds_lose_nothing(tmp_path: Path) -> None:
    from concurrent.futures import ThreadPoolExecutor

    ledgers = [UsageLedger(tmp_path, "concierge") for _ in range(4)]  # as from several hosts
    with ThreadPoolExecutor(max_workers=8) as pool:
        list(pool.map(lambda n: ledgers[n % 4].add(Usage(1, 2, 0)), range(40)))
    assert json.loads((tmp_path / "usage" / "concierge.json").read_text()) == {
        "input": 40,
        "output": 80,
        "cached": 0,
        "turns": 40,
        "estimated": 0,
    }


def test_the_ledger_learns_each_turns_overhead_beyond_its_message(tmp_path: Path) -> None:
    ledger = UsageLedger(tmp_path, "concierge")
    assert ledger.read().input_overhead() is None  # no turn yet: unknown
    ledger.add(Usage(1_000, 5, 0), estimated=10)
    ledger.add(Usage(3_000, 5, 0), estimated=1_990)
    used = ledger.read()
    assert (used.input, used.turns, used.estimated) == (4_000, 2, 2_000)
    assert used.input_overhead() == 1_000  # (4,000 - 2,000) / 2
    assert TenantUsage(10, 0, 0, 1, 50).input_overhead() == 0  # an overestimate is not negative


def test_a_ledger_written_before_estimates_were_recorded_still_reads(tmp_path: Path) -> None:
    path = tmp_path / "usage" / "concierge.json"
    path.parent.mkdir()
    path.write_text('{"input": 900, "output": 9, "cached": 0, "turns": 3}', encoding="utf-8")
    used = UsageLedger(tmp_path, "concierge").read()
    assert used == TenantUsage(900, 9, 0, 3, 0)
    assert used.input_overhead() == 300  # the whole input counts as overhead: conservative


def test_input_estimates_never_undercount_english_or_cjk() -> None:
    english = "the quick brown fox jumps over the lazy dog " * 100
    assert estimate_input_tokens(english) >= len(english) / 4
    chinese = "今天的天气很好" * 100
    assert estimate_input_tokens(chinese) >= len(chinese)
    assert estimate_input_tokens("") == 0
