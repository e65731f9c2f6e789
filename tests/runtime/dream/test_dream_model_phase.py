"""``mode: full``: the model phase is refused without a budget or without a price."""

from __future__ import annotations

from pathlib import Path

import pytest
from dream_support import NOW, Clock

from specwire.runtime.core.paths import StoreLayout
from specwire.runtime.dream import DreamSettings, run_dream
from specwire.runtime.dream.model_phase import NOT_WIRED, ModelPrice, list_prices, refusal
from specwire.runtime.dream.settings import EVERY_FLOOR_S


def _priced(model_id: str) -> ModelPrice | None:
    return ModelPrice(3.0, 15.0) if model_id == "anthropic/priced" else None


def test_deterministic_mode_has_no_model_phase() -> None:
    settings = DreamSettings(every_s=3600, budget_usd=1.0)
    assert refusal(settings, "anthropic/priced", _priced) == "mode is deterministic: no model phase"


@pytest.mark.parametrize("budget", [None, 0.0])
def test_full_mode_without_a_budget_is_refused(budget: float | None) -> None:
    settings = DreamSettings(every_s=3600, mode="full", budget_usd=budget)
    reason = refusal(settings, "anthropic/priced", _priced)
    assert reason == "refused: mode full needs a budget_usd above 0, and none is set"


def test_full_mode_with_an_unpriced_model_is_refused() -> None:
    settings = DreamSettings(every_s=3600, mode="full", budget_usd=0.5)
    reason = refusal(settings, "anthropic/claude-x", list_prices)
    assert reason is not None and reason.startswith("refused: the model anthropic/claude-x has no")
    assert "price table of 2026-12-02" in reason
    assert refusal(settings, None, _priced) == "refused: no model is configured for the model phase"


def test_the_list_prices_price_the_supported_families_and_nothing_else() -> None:
    assert list_prices("anthropic/claude-sonnet-4-5") == ModelPrice(3.0, 15.0, 0.3)
    assert list_prices("openai/gpt-4o") == ModelPrice(2.5, 10.0, 1.25)
    assert list_prices("scripted") is None
    assert list_prices("openai-compatible/llama3") is None


def test_a_run_in_full_mode_records_the_refusal_and_still_consolidates(tmp_path: Path) -> None:
    layout = StoreLayout(tmp_path, "demo")
    settings = DreamSettings(every_s=3600, mode="full")
    outcome = run_dream(layout, settings, now=Clock(NOW), model_id="anthropic/claude-x")
    assert outcome.status == "ok"
    assert not outcome.model.ran
    assert outcome.model.reason == "refused: mode full needs a budget_usd above 0, and none is set"
    budgeted = DreamSettings(every_s=3600, mode="full", budget_usd=1.0)
    outcome = run_dream(layout, budgeted, now=Clock(NOW), model_id="x/y", force=True)
    assert outcome.model.reason is not None and "has no price" in outcome.model.reason


def test_every_gate_passed_still_says_the_session_is_not_wired(tmp_path: Path) -> None:
    settings = DreamSettings(every_s=3600, mode="full", budget_usd=1.0)
    layout = StoreLayout(tmp_path, "demo")
    outcome = run_dream(
        layout, settings, now=Clock(NOW), model_id="anthropic/priced", price_of=_priced
    )
    assert not outcome.model.ran and outcome.model.reason == NOT_WIRED


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"every_s": EVERY_FLOOR_S - 1}, "below the 300s"),
        ({"every_s": 3600, "mode": "nightly"}, "deterministic or full"),
        ({"every_s": 3600, "budget_usd": -1.0}, "budget_usd"),
        ({"every_s": 3600, "budget_usd": float("nan")}, "budget_usd"),
        ({"every_s": 3600, "near_duplicate_jaccard": 0.0}, "near_duplicate_jaccard"),
        ({"every_s": 3600, "trash_retention_days": 0}, "trash_retention_days"),
    ],
)
def test_bad_settings_are_refused(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        DreamSettings(**kwargs)  # type: ignore[arg-type]
