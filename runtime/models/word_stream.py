"""Streaming a response that is already whole, word by word (the scripted and replay models).

``SPECWIRE_SCRIPTED_WORD_DELAY`` (seconds, default 0) is slept before each word after the first,
so tests and benches can watch time pass between the first word and the last.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Mapping

from specwire.runtime.models.errors import ModelConfigError
from specwire.runtime.models.streaming import (
    StreamSink,
    TextDelta,
    ToolArgumentsDelta,
    ToolCallStarted,
)
from specwire.runtime.models.types import ModelResponse

WORD_DELAY_ENV = "SPECWIRE_SCRIPTED_WORD_DELAY"
_WORD = re.compile(r"\s*\S+\s*|\s+")
_ARGUMENT_PIECE = 16


def word_delay_setting(env: Mapping[str, str]) -> float:
    raw = env.get(WORD_DELAY_ENV, "").strip()
    if not raw:
        return 0.0
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not 0 <= value <= 60:
        raise ModelConfigError(
            f"{WORD_DELAY_ENV} must be a number of seconds from 0 to 60 (got {raw!r})"
        )
    return value


def stream_words(response: ModelResponse, sink: StreamSink, *, delay: float = 0.0) -> None:
    """Report ``response`` to ``sink``: its text a word at a time (each word with the spaces
    around it, so the pieces join back to the text), then each tool call and its JSON input
    in pieces."""
    first = True
    for word in _WORD.findall(response.text):
        if delay and not first:
            time.sleep(delay)
        first = False
        sink(TextDelta(word))
    for call in response.tool_calls:
        sink(ToolCallStarted(call.id, call.name))
        arguments = json.dumps(call.input, ensure_ascii=False)
        for start in range(0, len(arguments), _ARGUMENT_PIECE):
            sink(ToolArgumentsDelta(call.id, arguments[start : start + _ARGUMENT_PIECE]))
