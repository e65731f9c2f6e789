"""Choosing a model by id. ``SPECWIRE_MODEL`` overrides the spec's model id.

A spec may give its model id as a secret reference (``model: $MODEL_ID``): the bundle carries
``SecretRef("MODEL_ID")`` and ``select_spec_model`` reads the variable here, at run time. With
``SPECWIRE_MODEL`` set the reference is not read at all (the override wins).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from specwire.runtime.core.patterns import LazyPattern
from specwire.runtime.models.errors import ModelError, ModelUnavailableError
from specwire.runtime.models.word_stream import word_delay_setting
from specwire.runtime.safety.redaction import register_secret
from specwire.runtime.safety.secrets import SecretRef

if TYPE_CHECKING:
    from specwire.runtime.models.types import Model

MODEL_ENV = "SPECWIRE_MODEL"
SCRIPT_ENV = "SPECWIRE_SCRIPT"

ModelRef = str | SecretRef


class ModelSecretMissingError(ModelError):
    """The spec's model id is a secret reference whose variable is not set."""

    def __init__(self, env: str) -> None:
        self.env = env
        super().__init__(
            f"the model id is read from the environment variable {env} (the spec says ${env}), "
            f"but {env} is not set. Set {env} to a model id (e.g. {env}=scripted), or set "
            f"{MODEL_ENV} to override the spec's model."
        )


def is_scripted(model_id: str) -> bool:
    return model_id == "scripted" or model_id.startswith("scripted/")


def resolve_model_id(model: ModelRef, *, environ: Mapping[str, str] | None = None) -> str:
    """The spec's model id: a plain id as given, a secret reference read from the environment.

    Raises ``ModelSecretMissingError`` when the referenced variable is unset or blank.
    """
    if isinstance(model, str):
        return model
    env = os.environ if environ is None else environ
    value = env.get(model.env, "").strip()
    if not value:
        raise ModelSecretMissingError(model.env)
    register_secret(model.env, value)
    return value


def select_spec_model(model: ModelRef, *, environ: Mapping[str, str] | None = None) -> Model:
    """The model a bundle asks for: ``$SPECWIRE_MODEL`` when set, else the spec's (resolved) id."""
    env = os.environ if environ is None else environ
    if env.get(MODEL_ENV, "").strip():
        return select_model("", environ=env)  # the override wins; the spec's id is not read
    return select_model(resolve_model_id(model, environ=env), environ=env)


_OPENAI_BARE = LazyPattern(r"^(gpt-|o\d)")


def provider_of(model_id: str) -> tuple[str, str] | None:
    """``(provider, wire model)`` for a real model id, ``None`` when the id has no adapter.

    ``anthropic/<m>`` and bare ``claude-*`` → Anthropic; ``openai/<m>``, bare ``gpt-*`` and
    ``o<digit>…`` → OpenAI; ``openai-compatible/<m>`` → the OpenAI SDK at ``$OPENAI_BASE_URL``.
    """
    prefix, slash, rest = model_id.partition("/")
    if slash:
        if prefix in ("anthropic", "openai", "openai-compatible") and rest.strip():
            return prefix, rest.strip()
        return None
    if model_id.startswith("claude-"):
        return "anthropic", model_id
    if _OPENAI_BARE.match(model_id):
        return "openai", model_id
    return None


def select_model(model_id: str, *, environ: Mapping[str, str] | None = None) -> Model:
    """The model for ``model_id`` (or ``$SPECWIRE_MODEL`` when set).

    ``scripted`` / ``scripted/<anything>`` is the offline scripted model; with
    ``$SPECWIRE_SCRIPT`` set it replays that file instead. ``scripted/failing`` fails every call
    with a retryable error (to show fallbacks), script or not. Real ids (see ``provider_of``) get
    the Anthropic or OpenAI adapter, which raise ``ModelConfigError`` at once for a missing key,
    base URL or SDK. Any other id raises ``ModelUnavailableError``.
    """
    env = os.environ if environ is None else environ
    override = env.get(MODEL_ENV, "").strip()
    chosen = override or model_id.strip()
    if not is_scripted(chosen):
        found = provider_of(chosen)
        if found is None:
            raise ModelUnavailableError(chosen, from_env=bool(override))
        provider, wire = found
        # One adapter module is imported, the one chosen (an offline bundle imports neither).
        if provider == "anthropic":
            from specwire.runtime.models.anthropic_model import AnthropicModel

            return AnthropicModel(chosen, wire, environ=env)
        from specwire.runtime.models.openai_model import OpenAIModel

        return OpenAIModel(chosen, wire, compatible=provider == "openai-compatible", environ=env)
    # The offline models load only when chosen (a replay only with a script).
    from specwire.runtime.models.scripted import FAILING_MODEL_ID, FailingModel, ScriptedModel

    if chosen == FAILING_MODEL_ID:
        return FailingModel(chosen)
    delay = word_delay_setting(env)
    script = env.get(SCRIPT_ENV, "").strip()
    if script:
        from specwire.runtime.models.replay import ReplayModel

        return ReplayModel(Path(script), model_id=chosen, word_delay=delay)
    return ScriptedModel(chosen, word_delay=delay)
