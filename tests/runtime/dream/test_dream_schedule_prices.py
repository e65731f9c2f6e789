"""A scheduled dream prices its model with the spec's ``memory.dream.prices``: a priced model is
no longer refused for want of a price (the scheduled run has no model session, and says so)."""

from __future__ import annotations

import json
from pathlib import Path

from specwire.runtime.core.paths import StoreLayout
from specwire.runtime.dream.model_phase import NOT_WIRED
from specwire.runtime.dream.schedule import DreamJob, wait_for_dreams
from specwire.runtime.dream.settings import DreamSettings
from specwire.runtime.dream.state import state_path
from specwire.runtime.models.prices import ModelPrice


def _model_phase(tmp_path: Path, prices: dict[str, ModelPrice]) -> dict[str, object]:
    layout = StoreLayout.for_cwd(tmp_path, "priced")
    layout.state_dir.mkdir(parents=True)
    settings = DreamSettings(every_s=3600, mode="full", budget_usd=1.0)
    job = DreamJob(layout, settings, lambda _line: None, prices=prices)
    assert job.start_if_due("scripted") is not None
    assert wait_for_dreams(120.0)
    state = json.loads(state_path(layout).read_text(encoding="utf-8"))
    model = state["lastOutcome"]["model"]
    assert isinstance(model, dict)
    return model


def test_the_spec_prices_a_scheduled_dream(tmp_path: Path) -> None:
    model = _model_phase(tmp_path, {"scripted": ModelPrice(1.0, 1.0)})
    assert model["reason"] == NOT_WIRED


def test_without_a_price_it_is_refused(tmp_path: Path) -> None:
    model = _model_phase(tmp_path, {})
    assert str(model["reason"]).startswith("refused: the model scripted has no price")
