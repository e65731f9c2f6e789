"""What a turn the stream sink cancelled records: the text streamed so far and its usage.

``StreamWatch`` is the sink the loop hands the model: it passes every event on to the host's
sink and notes, before passing it, what the unfinished model call has produced, so the turn can
be recorded once, as cancelled (see ``runtime.loop.chat``).
"""

from __future__ import annotations

from specwire.runtime.models.scripted import estimate_usage
from specwire.runtime.models.streaming import (
    Restart,
    StreamEvent,
    StreamSink,
    TextDelta,
    UsageReport,
)
from specwire.runtime.models.types import ModelRequest, ModelResponse, Usage

# The result a call of a cancelled tool round gets in the conversation when it did not run.
CANCELLED_RESULT = "[not run: the turn was cancelled]"


class StreamWatch:
    def __init__(self, sink: StreamSink) -> None:
        self._sink = sink
        self._finished: Usage | None = None
        self._request: ModelRequest | None = None
        self._text: list[str] = []
        self._reported: Usage | None = None

    def start_turn(self) -> None:
        self._finished = None
        self._request = None

    def start_call(self, request: ModelRequest) -> None:
        self._request = request
        self._text = []
        self._reported = None

    def end_call(self, usage: Usage | None) -> None:
        self._request = None
        if usage is not None:
            self._finished = usage if self._finished is None else self._finished + usage

    def __call__(self, event: StreamEvent) -> None:
        if isinstance(event, Restart):  # what was streamed is discarded, and so is its count
            self._text = []
            self._reported = None
        elif isinstance(event, TextDelta):
            self._text.append(event.text)
        elif isinstance(event, UsageReport):
            self._reported = event.usage
        self._sink(event)

    def cancelled_call(self) -> tuple[str, Usage | None]:
        """The unfinished call's streamed text, and the turn's usage with it counted."""
        request = self._request
        if request is None:  # cancelled around a tool: no model call was open
            return "", self._finished
        text = "".join(self._text)
        estimate = estimate_usage(request, ModelResponse(text=text))
        reported = self._reported
        partial = (
            estimate
            if reported is None
            else Usage(reported.input, max(reported.output, estimate.output), reported.cached)
        )
        return text, partial if self._finished is None else self._finished + partial
