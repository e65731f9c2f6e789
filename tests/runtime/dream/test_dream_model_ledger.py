"""The dream state's ``modelLedger``: every model phase's spend, carried from run to run, shown
by ``codegen dream status`` beside the last run's."""

from __future__ import annotations

from pathlib import Path

import pytest
from dream_support import NOW, Clock

from specwire.runtime.core.paths import StoreLayout
from specwire.runtime.dream import DreamSettings, run_dream
from specwire.runtime.dream.model_phase import ModelPrice
from specwire.runtime.dream.outcome import ModelPhase
from specwire.runtime.dream.state import model_ledger, read_state
from specwire.runtime.owner.dream_command import main


def _session(settings: DreamSettings, price: ModelPrice) -> ModelPhase:
    return ModelPhase(
        ran=True,
        spent_usd=0.0125,
        model="scripted",
        budget_usd=settings.budget_usd,
        calls=2,
        input_tokens=3000,
        output_tokens=40,
        cached_tokens=100,
    )


def _dream(layout: StoreLayout, *, mode: str = "full") -> None:
    settings = DreamSettings(every_s=3600, mode=mode, budget_usd=0.02)  # type: ignore[arg-type]
    run_dream(
        layout,
        settings,
        now=Clock(NOW),
        model_id="scripted",
        price_of=lambda model_id: ModelPrice(1.0, 1.0),
        model_session=_session,
        force=True,
    )


def test_the_ledger_adds_up_every_model_phase_and_keeps_through_one_without(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    layout = StoreLayout.for_cwd(tmp_path, "demo")
    layout.state_dir.mkdir(parents=True)
    _dream(layout)
    _dream(layout)
    _dream(layout, mode="deterministic")  # no model phase: the tally stays
    state = read_state(layout)
    assert state is not None
    assert state["modelLedger"] == {
        "runs": 2,
        "calls": 4,
        "inputTokens": 6000,
        "outputTokens": 80,
        "cachedTokens": 200,
        "unmeteredCalls": 0,
        "spentUsd": 0.025,
        "since": "2026-06-01T12:00:00.000Z",
    }
    assert main(["--root", str(tmp_path), "status"]) == 0
    out = capsys.readouterr().out
    assert "model phase: mode is deterministic: no model phase" in out
    assert (
        "model phases to date: 2 run(s) since 2026-06-01T12:00:00.000Z: 4 call(s), 6000 input "
        "(200 cached) / 80 output tokens, $0.025000"
    ) in out


def test_no_ledger_before_a_model_phase_and_a_damaged_one_restarts() -> None:
    not_run = {"ran": False, "reason": "mode is deterministic: no model phase"}
    assert model_ledger(None, not_run, NOW) is None
    ran = {"ran": True, "calls": 1, "input_tokens": 10, "output_tokens": 2, "spent_usd": 0.5}
    damaged = {"modelLedger": {"runs": "many"}}
    assert model_ledger(damaged, ran, NOW) == {
        "runs": 1,
        "calls": 1,
        "inputTokens": 10,
        "outputTokens": 2,
        "cachedTokens": 0,
        "unmeteredCalls": 0,
        "spentUsd": 0.5,
        "since": "2026-06-01T12:00:00.000Z",
    }
