"""Errors raised when a model cannot be selected or fails to answer."""

from __future__ import annotations


class ModelError(Exception):
    """A model could not be used; the message is meant for the person running the agent."""


class ModelUnavailableError(ModelError):
    """The requested model id has no adapter in this release."""

    def __init__(self, model_id: str, *, from_env: bool = False) -> None:
        self.model_id = model_id
        origin = " (from SPECWIRE_MODEL)" if from_env else ""
        super().__init__(
            f'model "{model_id}"{origin} is not available: this release ships only the offline '
            "scripted model; real adapters (OpenAI-compatible, Anthropic) land in a later "
            "release. Set SPECWIRE_MODEL=scripted to run offline."
        )
