"""A model that falls back to the next one when a call fails with a retryable error.

``FallbackModel([primary, *fallbacks], log)`` asks each model in order, per call: the first
answer wins. Only retryable failures (``ModelError.retryable``: rate limited, overloaded or
failing servers, timeouts, unreachable providers) move on to the next model; any other error
(a rejected key, an unknown model, a prompt too long, a refusal, a bug) is raised at once. When
every model fails, the last error is raised. Each fallback is logged as one line:
``[model] <id> failed (<reason>); falling back to <next id>``.

``stream`` follows the same rules. A model that fails after it began streaming (a text or tool
call delta reached the sink) is not a silent fallback: the sink gets ``Restart(reason)`` before
the next model streams, so whoever shows the answer discards what was shown and says so.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence

from specwire.runtime.models.errors import (
    ModelConnectionError,
    ModelError,
    ModelRateLimitError,
    ModelServerError,
    ModelTimeoutError,
    is_retryable,
)
from specwire.runtime.models.streaming import (
    Restart,
    StreamEvent,
    StreamSink,
    TextDelta,
    ToolArgumentsDelta,
    ToolCallStarted,
    complete_streaming,
)
from specwire.runtime.models.types import Model, ModelRequest, ModelResponse

_REASONS: tuple[tuple[type[ModelError], str], ...] = (
    (ModelRateLimitError, "rate limited"),
    (ModelServerError, "server error or overloaded"),
    (ModelTimeoutError, "timed out"),
    (ModelConnectionError, "unreachable"),
)


def fallback_reason(error: ModelError) -> str:
    """A few words for the log line (never the provider's message: it may be long)."""
    for kind, reason in _REASONS:
        if isinstance(error, kind):
            return reason
    return type(error).__name__


class FallbackModel:
    """Implements the ``Model`` protocol over ``models`` (the primary first, then fallbacks).

    ``log`` receives one complete line per fallback, ending in a newline (``stderr_log`` fits).
    ``model_id`` is the id of the model that answered the calling thread's last call (else the
    last answer of any thread, the primary's before any answer): a host's turns and its dream's
    session share one chain from their own threads, and the dream prices each of its calls by
    who answered it.
    """

    def __init__(self, models: Sequence[Model], log: Callable[[str], None]) -> None:
        if not models:
            raise ValueError("FallbackModel needs at least one model")
        self._models = tuple(models)
        self._log = log
        self._answered = self._models[0]
        self._local = threading.local()  # ``answered``: this thread's last answering model

    @property
    def models(self) -> tuple[Model, ...]:
        return self._models

    @property
    def model_id(self) -> str:
        answered: Model = getattr(self._local, "answered", self._answered)
        return answered.model_id

    def complete(self, request: ModelRequest) -> ModelResponse:
        return self._first_answer(request, None)

    def stream(self, request: ModelRequest, sink: StreamSink) -> ModelResponse:
        return self._first_answer(request, sink)

    def _first_answer(self, request: ModelRequest, sink: StreamSink | None) -> ModelResponse:
        last = len(self._models) - 1
        for index, model in enumerate(self._models):
            watched = _WatchedSink(sink) if sink is not None else None
            try:
                if watched is None:
                    response = model.complete(request)
                else:
                    response = complete_streaming(model, request, watched)
            except ModelError as error:
                if not is_retryable(error) or index == last:
                    raise
                following = self._models[index + 1].model_id
                reason = fallback_reason(error)
                self._log(
                    f"[model] {model.model_id} failed ({reason}); falling back to {following}\n"
                )
                if sink is not None and watched is not None and watched.started:
                    sink(
                        Restart(
                            f"{model.model_id} failed while answering ({reason}); "
                            f"starting again with {following}"
                        )
                    )
                continue
            self._answered = self._local.answered = model
            return response
        raise AssertionError("unreachable: the last model either answers or raises")


_ANSWER_EVENTS = (TextDelta, ToolCallStarted, ToolArgumentsDelta)


class _WatchedSink:
    """Passes events on and notes whether any of the answer itself reached the sink."""

    def __init__(self, sink: StreamSink) -> None:
        self._sink = sink
        self.started = False

    def __call__(self, event: StreamEvent) -> None:
        if isinstance(event, _ANSWER_EVENTS):
            self.started = True
        self._sink(event)
