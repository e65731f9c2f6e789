"""A tenant's usage ledger records the scheduled dream's model phases as a kind of their own:
calls, tokens and cost beside the turns' totals, never added to them (the budget is enforced
from the turns'), on files; ``metered`` hands every phase a dream session ran (a failed one
too) to the host; ``codegen memory usage`` shows both kinds."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from specwire.runtime.core.errors import StoreError
from specwire.runtime.core.tenancy import build_tenant
from specwire.runtime.dream.outcome import ModelPhase, ModelPhaseFailed
from specwire.runtime.hosts.dream_session import dream_usage, metered
from specwire.runtime.hosts.http.usage_ledger import UsageLedger, budget_problem
from specwire.runtime.hosts.types import TenantConfig
from specwire.runtime.models import Usage
from specwire.runtime.owner.command import main
from specwire.runtime.usage.totals import DreamUsage, TenantUsage

SPEC = "concierge"
PHASE = ModelPhase(
    ran=True,
    spent_usd=0.012345,
    model="scripted",
    budget_usd=0.03,
    calls=3,
    input_tokens=3000,
    output_tokens=120,
    cached_tokens=500,
)


def _ledger(tmp_path: Path, tenant: str = "acme") -> UsageLedger:
    return UsageLedger(build_tenant(tenant, tmp_path / ".specwire" / "tenants").root, SPEC)


def test_a_dream_is_its_own_kind_and_never_counts_as_turns(tmp_path: Path) -> None:
    ledger = _ledger(tmp_path)
    ledger.add(Usage(input=100, output=10, cached=0), estimated=40)
    turns_only = ledger.path.read_bytes()
    assert b"dream" not in turns_only  # a ledger of turns keeps its bytes
    usage = dream_usage(PHASE)
    assert usage == DreamUsage(1, 3, 3000, 120, 500, 12345)
    ledger.add_dream(usage)
    assert ledger.add_dream(usage) == DreamUsage(2, 6, 6000, 240, 1000, 24690)
    assert ledger.read() == TenantUsage(100, 10, 0, 1, 40)  # the turns' totals, unchanged
    assert ledger.read_dream().cost_usd == pytest.approx(0.02469)
    # A turn after the dream keeps the dream's totals.
    ledger.add(Usage(input=1, output=1))
    assert ledger.read_dream().runs == 2 and ledger.read().turns == 2
    # The budget is the turns': a dream never spends a tenant's turn budget.
    tenant = TenantConfig(id="acme", max_input_tokens=150, max_output_tokens=None)
    assert budget_problem(ledger.read(), tenant) is None


def test_a_damaged_dream_total_fails_closed(tmp_path: Path) -> None:
    ledger = _ledger(tmp_path)
    ledger.add(Usage(input=1, output=1))
    data = json.loads(ledger.path.read_text(encoding="utf-8"))
    data["dream"] = {"runs": -1}
    ledger.path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(StoreError, match="damaged"):
        ledger.read()
    with pytest.raises(StoreError, match="damaged"):
        ledger.add_dream(DreamUsage(runs=1, calls=1))


def test_metered_records_every_phase_a_failed_one_too_and_none_without_calls() -> None:
    recorded: list[ModelPhase] = []
    assert metered(lambda settings, price: PHASE, recorded.append)(Any, Any) == PHASE
    failed = ModelPhase(ran=True, calls=1, input_tokens=10, spent_usd=0.001)

    def failing(settings: Any, price: Any) -> ModelPhase:
        raise ModelPhaseFailed("provider down", failed)

    with pytest.raises(ModelPhaseFailed):
        metered(failing, recorded.append)(Any, Any)
    assert recorded == [PHASE, failed]
    assert dream_usage(ModelPhase(ran=True, calls=0)) is None
    assert dream_usage(ModelPhase(ran=False, reason="no price")) is None


def test_the_owner_sees_both_kinds_per_tenant(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    acme = _ledger(tmp_path)
    acme.add(Usage(input=100, output=10, cached=5))
    acme.add_dream(DreamUsage(1, 3, 3000, 120, 500, 12345))
    _ledger(tmp_path, "globex").add(Usage(input=7, output=7))

    status = main(["--root", str(tmp_path), "--tenant", "acme", "--json", "usage"])
    out, err = capsys.readouterr()
    assert status == 0, err
    assert json.loads(out) == [
        {
            "spec": SPEC,
            "turns": {"turns": 1, "input": 100, "output": 10, "cached": 5},
            "dream": {
                "runs": 1,
                "calls": 3,
                "input": 3000,
                "output": 120,
                "cached": 500,
                "costUsd": 0.012345,
            },
        }
    ]
    status = main(["--root", str(tmp_path), "--tenant", "globex", "usage"])
    out, _ = capsys.readouterr()
    assert (
        status == 0
        and "1 turn(s), 7 input" in out
        and "dream (not in the turn budget): 0 run(s)" in out
    )
    status = main(["--root", str(tmp_path), "--tenant", "nobody", "usage"])
    _, err = capsys.readouterr()
    assert status == 2 and err.count("\n") == 1


def test_a_negative_count_from_a_model_never_damages_the_file_ledger(tmp_path: Path) -> None:
    """A provider (or proxy) reporting negative tokens is recorded as 0, as PostgreSQL's
    ledger records it: written as given, the next read called the ledger damaged and every
    turn of the tenant failed until the owner fixed the file."""
    ledger = _ledger(tmp_path)
    ledger.add(Usage(input=-40, output=7, cached=-1), estimated=-3)
    ledger.add_dream(DreamUsage(runs=1, calls=1, input=-500, output=-2, cost_micro_usd=10))
    assert ledger.read() == TenantUsage(input=0, output=7, cached=0, turns=1, estimated=0)
    assert ledger.read_dream() == DreamUsage(runs=1, calls=1, cost_micro_usd=10)
    ledger.add(Usage(input=10, output=1))
    assert ledger.read() == TenantUsage(input=10, output=8, cached=0, turns=2, estimated=0)


@pytest.mark.parametrize("where", ["turns", "dream"])
def test_a_count_past_the_databases_bigint_is_damage(tmp_path: Path, where: str) -> None:
    """A ledger count no PostgreSQL ``bigint`` holds was never written by a host: read as
    damage (``migrate`` stops before copying anything), not carried into a migration that
    failed halfway on the database's out-of-range error."""
    ledger = _ledger(tmp_path)
    ledger.add(Usage(input=1, output=1))
    data = json.loads(ledger.path.read_text(encoding="utf-8"))
    if where == "turns":
        data["input"] = 2**63
    else:
        data["dream"] = {"runs": 1, "costMicroUsd": 2**63}
    ledger.path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(StoreError, match="damaged"):
        ledger.read()
    data["input"], data["dream"] = 2**63 - 1, {"runs": 2**63 - 1}
    ledger.path.write_text(json.dumps(data), encoding="utf-8")
    assert ledger.read().input == 2**63 - 1 and ledger.read_dream().runs == 2**63 - 1
