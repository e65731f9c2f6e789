"""Errors raised when a model cannot be selected or fails to answer."""

from __future__ import annotations

from typing import ClassVar


class ModelError(Exception):
    """A model could not be used; the message is meant for the person running the agent.

    ``retryable`` marks the failures another try (or another model) may get past: rate limited,
    overloaded or failing servers (5xx), timeouts and unreachable providers. A rejected key, an
    unknown model, a prompt too long or a refusal is not retryable.
    """

    retryable: ClassVar[bool] = False


class ModelUnavailableError(ModelError):
    """The requested model id matches no adapter."""

    def __init__(self, model_id: str, *, from_env: bool = False) -> None:
        self.model_id = model_id
        origin = " (from SPECWIRE_MODEL)" if from_env else ""
        super().__init__(
            f'model "{model_id}"{origin} is not available: use anthropic/<model> or claude-*, '
            "openai/<model>, gpt-* or o<digit>…, openai-compatible/<model> (with "
            "OPENAI_BASE_URL), or scripted. Set SPECWIRE_MODEL=scripted to run offline."
        )


class ModelConfigError(ModelError):
    """A real model was selected but cannot start: a missing key, base URL or SDK."""


class ModelCallError(ModelError):
    """A call to a real model failed after the SDK's bounded retries."""


class ModelTimeoutError(ModelCallError):
    """The provider did not answer in time."""

    retryable: ClassVar[bool] = True


class ModelConnectionError(ModelCallError):
    """The provider could not be reached."""

    retryable: ClassVar[bool] = True


class ModelRateLimitError(ModelCallError):
    """The provider kept answering 429 (rate limited or out of quota)."""

    retryable: ClassVar[bool] = True


class ModelServerError(ModelCallError):
    """The provider kept answering with a server error (5xx, an overloaded API's 529 too)."""

    retryable: ClassVar[bool] = True


class ModelAuthError(ModelCallError):
    """The provider rejected the API key."""


class ModelNotFoundError(ModelCallError):
    """The provider does not know the model id."""


class ContextTooLongError(ModelCallError):
    """The prompt is longer than the model's context window."""


class ModelRefusalError(ModelCallError):
    """The model refused to answer."""


def is_retryable(error: BaseException) -> bool:
    """Whether ``error`` is a model failure another try or another model may get past."""
    return isinstance(error, ModelError) and error.retryable
