"""Script mode: replay responses from a JSON file, in order (``SPECWIRE_SCRIPT=<path>``).

The file holds a list (or ``{"responses": [...]}``) of responses, each
``{"text"?: str, "tool_calls"?: [{"name": str, "input"?: object, "id"?: "tu_…"}]}``.
Every model call consumes the next response, whatever the request says. When the script runs
out, the model answers ``[script exhausted after N responses]`` without calling tools.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from specwire.runtime.core.ids import new_tool_use_id
from specwire.runtime.models.errors import ModelError
from specwire.runtime.models.streaming import StreamSink
from specwire.runtime.models.types import ModelRequest, ModelResponse, ToolCall
from specwire.runtime.models.word_stream import stream_words


class ReplayModel:
    def __init__(self, path: Path, model_id: str = "scripted", *, word_delay: float = 0.0) -> None:
        self._model_id = model_id
        self._word_delay = word_delay
        self._responses = load_script(path)
        self._next = 0

    @property
    def model_id(self) -> str:
        return self._model_id

    @property
    def remaining(self) -> int:
        return len(self._responses) - self._next

    def complete(self, request: ModelRequest) -> ModelResponse:
        if self._next >= len(self._responses):
            return ModelResponse(text=f"[script exhausted after {len(self._responses)} responses]")
        text, calls = self._responses[self._next]
        self._next += 1
        tool_calls = [
            ToolCall(call_id or new_tool_use_id(), name, dict(args))
            for call_id, name, args in calls
        ]
        return ModelResponse(text=text, tool_calls=tool_calls)

    def stream(self, request: ModelRequest, sink: StreamSink) -> ModelResponse:
        """The next response, as ``complete`` gives it, reported word by word."""
        response = self.complete(request)
        stream_words(response, sink, delay=self._word_delay)
        return response


_Call = tuple[str | None, str, dict[str, Any]]


def load_script(path: Path) -> list[tuple[str, list[_Call]]]:
    """Read and validate a script file; a bad file is a ``ModelError`` naming the entry."""
    where = f"SPECWIRE_SCRIPT={path}"
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ModelError(f"{where}: cannot read the script: {exc.strerror or exc}") from None
    except json.JSONDecodeError as exc:
        raise ModelError(f"{where}: not valid JSON: {exc.msg} (line {exc.lineno})") from None
    if isinstance(raw, dict) and "responses" in raw:
        raw = raw["responses"]
    if not isinstance(raw, list):
        raise ModelError(f'{where}: expected a list of responses or {{"responses": [...]}}')
    return [_response(entry, f"{where}: response {index + 1}") for index, entry in enumerate(raw)]


def _response(entry: Any, where: str) -> tuple[str, list[_Call]]:
    if not isinstance(entry, dict):
        raise ModelError(f"{where}: expected an object with text and/or tool_calls")
    unknown = sorted(set(entry) - {"text", "tool_calls"})
    if unknown:
        raise ModelError(f"{where}: unknown key(s) {', '.join(unknown)}")
    text = entry.get("text", "")
    if not isinstance(text, str):
        raise ModelError(f"{where}: text must be a string")
    calls = entry.get("tool_calls", [])
    if not isinstance(calls, list):
        raise ModelError(f"{where}: tool_calls must be a list")
    return text, [_tool_call(call, f"{where}, tool call {n + 1}") for n, call in enumerate(calls)]


def _tool_call(call: Any, where: str) -> _Call:
    if not isinstance(call, dict) or not isinstance(call.get("name"), str) or not call["name"]:
        raise ModelError(f"{where}: expected {{name, input}} with a non-empty name")
    args = call.get("input", {})
    if not isinstance(args, dict):
        raise ModelError(f"{where}: input must be a JSON object")
    call_id = call.get("id")
    if call_id is not None and not isinstance(call_id, str):
        raise ModelError(f"{where}: id must be a string")
    return call_id, call["name"], args
