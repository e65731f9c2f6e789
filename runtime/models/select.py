"""Choosing a model by id. ``SPECWIRE_MODEL`` overrides the spec's model id."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from runtime.models.errors import ModelUnavailableError
from runtime.models.replay import ReplayModel
from runtime.models.scripted import ScriptedModel
from runtime.models.types import Model

MODEL_ENV = "SPECWIRE_MODEL"
SCRIPT_ENV = "SPECWIRE_SCRIPT"


def is_scripted(model_id: str) -> bool:
    return model_id == "scripted" or model_id.startswith("scripted/")


def select_model(model_id: str, *, environ: Mapping[str, str] | None = None) -> Model:
    """The model for ``model_id`` (or ``$SPECWIRE_MODEL`` when set).

    ``scripted`` / ``scripted/<anything>`` is the offline scripted model; with
    ``$SPECWIRE_SCRIPT`` set it replays that file instead. Any other id raises
    ``ModelUnavailableError``: real adapters land in a later release.
    """
    env = os.environ if environ is None else environ
    override = env.get(MODEL_ENV, "").strip()
    chosen = override or model_id.strip()
    if not is_scripted(chosen):
        raise ModelUnavailableError(chosen, from_env=bool(override))
    script = env.get(SCRIPT_ENV, "").strip()
    if script:
        return ReplayModel(Path(script), model_id=chosen)
    return ScriptedModel(chosen)
