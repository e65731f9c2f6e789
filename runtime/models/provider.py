"""What the real adapters share: SDK loading, keys, timeouts and retries, error mapping, order.

The SDKs are imported here lazily, only when a real model is selected, so ``import runtime``
never loads them. Settings come from the environment:

- ``SPECWIRE_MODEL_TIMEOUT``: seconds per request (default 60);
- ``SPECWIRE_MODEL_MAX_RETRIES``: retries on 429 / 5xx / connection errors (default 2), with the
  SDK's exponential backoff (or the server's ``retry-after``);
- ``SPECWIRE_MODEL_MAX_TOKENS``: the answer's token limit where the API needs one (default 4096).
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Mapping
from types import ModuleType

from specwire.runtime.models.errors import (
    ContextTooLongError,
    ModelAuthError,
    ModelCallError,
    ModelConfigError,
    ModelConnectionError,
    ModelError,
    ModelNotFoundError,
    ModelRateLimitError,
    ModelServerError,
    ModelTimeoutError,
)
from specwire.runtime.models.types import ModelRequest, SystemBlock, SystemBlockKind, ToolCall
from specwire.runtime.safety.redaction import register_secret

TIMEOUT_ENV = "SPECWIRE_MODEL_TIMEOUT"
RETRIES_ENV = "SPECWIRE_MODEL_MAX_RETRIES"
MAX_TOKENS_ENV = "SPECWIRE_MODEL_MAX_TOKENS"
DEFAULT_TIMEOUT = 60.0
DEFAULT_RETRIES = 2
DEFAULT_MAX_TOKENS = 4096

# Stable blocks first (the cacheable prefix), then the ones that change between sessions.
STABLE_KINDS: tuple[SystemBlockKind, ...] = ("instructions", "skills")
VOLATILE_KINDS: tuple[SystemBlockKind, ...] = (
    "recalled_memory",
    "agent_memory",
    "crew_memory",
    "document_memory",
    "handoff",
    "continuity_tail",
)


def cache_order(blocks: list[SystemBlock]) -> tuple[list[SystemBlock], list[SystemBlock]]:
    """The non-empty blocks split into (stable, volatile), each in the prompt's order."""
    present = [block for block in blocks if block.text.strip()]
    stable = [block for block in present if block.kind in STABLE_KINDS]
    volatile = [block for block in present if block.kind not in STABLE_KINDS]
    return stable, volatile


def load_sdk(name: str) -> ModuleType:
    try:
        return importlib.import_module(name)
    except ImportError:
        raise ModelConfigError(
            f'the {name} model adapter needs the "{name}" package, which is not installed; '
            f'run: pip install "specwire[{name}]"'
        ) from None


def require_env(env: Mapping[str, str], name: str, model_id: str) -> str:
    value = env.get(name, "").strip()
    if not value:
        raise ModelConfigError(
            f'model "{model_id}" needs an API key in the environment variable {name}, '
            f"which is not set; set {name} (or set SPECWIRE_MODEL=scripted to run offline)"
        )
    register_secret(name, value)
    return value


def _number(env: Mapping[str, str], name: str, default: float, *, integer: bool) -> float:
    raw = env.get(name, "").strip()
    if not raw:
        return default
    try:
        value = int(raw) if integer else float(raw)
    except ValueError:
        value = -1
    if value < 0:
        kind = "a whole number" if integer else "a number of seconds"
        raise ModelConfigError(f"{name} must be {kind} >= 0 (got {raw!r})")
    return value


def timeout_setting(env: Mapping[str, str]) -> float:
    return _number(env, TIMEOUT_ENV, DEFAULT_TIMEOUT, integer=False)


def retries_setting(env: Mapping[str, str]) -> int:
    return int(_number(env, RETRIES_ENV, DEFAULT_RETRIES, integer=True))


def max_tokens_setting(env: Mapping[str, str]) -> int:
    return max(1, int(_number(env, MAX_TOKENS_ENV, DEFAULT_MAX_TOKENS, integer=True)))


def capped_max_tokens(limit: int, request: ModelRequest) -> int:
    """The answer tokens a call may use: ``limit`` (``SPECWIRE_MAX_TOKENS``), or less when the
    request caps it (``ModelRequest.max_output_tokens``: a budget's room); at least 1."""
    cap = request.max_output_tokens
    return max(1, limit if cap is None else min(limit, cap))


def _detail(exc: BaseException) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        error = body.get("error", body)
        if isinstance(error, dict) and isinstance(error.get("message"), str):
            return str(error["message"])
    message = getattr(exc, "message", None) or str(exc)
    return " ".join(str(message).split())[:300]


def map_sdk_error(
    sdk: ModuleType, exc: BaseException, *, model_id: str, key_env: str | None, retries: int
) -> ModelError:
    """One clear ``ModelError`` for an exception the SDK raised (after its own retries)."""
    detail = _detail(exc)
    tries = f"after {retries + 1} attempt(s)"
    if isinstance(exc, sdk.APITimeoutError):
        return ModelTimeoutError(
            f'model "{model_id}" did not answer in time {tries}; raise {TIMEOUT_ENV} (seconds) '
            "or try again later"
        )
    if isinstance(exc, sdk.APIConnectionError):
        return ModelConnectionError(
            f'model "{model_id}": cannot reach the provider {tries} ({detail}); check the '
            "network or the base URL"
        )
    if isinstance(exc, sdk.RateLimitError):
        return ModelRateLimitError(
            f'model "{model_id}" is rate limited (429) {tries}: {detail}; wait and try again, '
            f"or raise {RETRIES_ENV}"
        )
    if isinstance(exc, sdk.AuthenticationError | sdk.PermissionDeniedError):
        where = f" in {key_env}" if key_env else ""
        return ModelAuthError(
            f'model "{model_id}": the provider rejected the API key{where}: {detail}'
        )
    if isinstance(exc, sdk.NotFoundError):
        return ModelNotFoundError(
            f'model "{model_id}": the provider does not know this model ({detail}); check the '
            "model id in the spec"
        )
    if isinstance(exc, sdk.APIStatusError):
        status = getattr(exc, "status_code", 0)
        lowered = detail.lower()
        if status in (400, 413) and (
            "too long" in lowered or "context" in lowered or "maximum" in lowered
        ):
            return ContextTooLongError(
                f'model "{model_id}": the prompt is too long for the model\'s context window '
                f"({detail}); start a new session or send less text"
            )
        if status >= 500:
            return ModelServerError(
                f'model "{model_id}": the provider failed with {status} {tries}: {detail}; '
                "try again later"
            )
        return ModelCallError(f'model "{model_id}": the request failed with {status}: {detail}')
    return ModelCallError(f'model "{model_id}": {type(exc).__name__}: {detail}')


# Error types a provider sends inside a stream (the HTTP status was already 200).
_STREAM_SERVER_ERRORS = frozenset({"overloaded_error", "api_error", "server_error", "overloaded"})
_STREAM_RATE_ERRORS = frozenset({"rate_limit_error", "rate_limit_exceeded", "requests"})


def _stream_error_type(exc: BaseException) -> str:
    body = getattr(exc, "body", None)
    error = body.get("error", body) if isinstance(body, dict) else None
    if not isinstance(error, dict):
        return ""
    return str(error.get("type") or error.get("code") or "")


def _transport_failure(exc: BaseException) -> str | None:
    """``"timeout"`` / ``"connection"`` for the HTTP library's errors (httpx or its successor,
    whichever the SDK uses: the SDK does not always wrap them while a stream is read)."""
    names = {
        cls.__name__
        for cls in type(exc).__mro__
        if cls.__module__.split(".")[0] in ("httpx", "httpx2", "httpcore")
    }
    if not names:
        return None
    return "timeout" if "TimeoutException" in names or "ReadTimeout" in names else "connection"


def map_stream_error(
    sdk: ModuleType, exc: BaseException, *, model_id: str, key_env: str | None, retries: int
) -> ModelError | None:
    """One ``ModelError`` for a failure while a stream is read; ``None`` when ``exc`` is not the
    provider's (a bug, or the sink's own exception: re-raise it as it is)."""
    status = getattr(exc, "status_code", 0)
    if isinstance(exc, sdk.APITimeoutError | sdk.APIConnectionError) or (
        isinstance(exc, sdk.APIStatusError) and status >= 400
    ):
        return map_sdk_error(sdk, exc, model_id=model_id, key_env=key_env, retries=retries)
    if isinstance(exc, sdk.APIError):  # an error event inside the stream (the status was 200)
        kind, detail = _stream_error_type(exc), _detail(exc)
        if kind in _STREAM_SERVER_ERRORS:
            return ModelServerError(
                f'model "{model_id}": the provider failed while answering ({kind}: {detail}); '
                "try again later"
            )
        if kind in _STREAM_RATE_ERRORS:
            return ModelRateLimitError(
                f'model "{model_id}" was rate limited while answering ({detail}); wait and try '
                "again"
            )
        return ModelCallError(
            f'model "{model_id}": the answer failed ({kind or "error"}: {detail})'
        )
    failure = _transport_failure(exc)
    if failure == "timeout":
        return ModelTimeoutError(
            f'model "{model_id}" stopped sending its answer in time; raise {TIMEOUT_ENV} (seconds) '
            "or try again later"
        )
    if failure == "connection":
        return ModelConnectionError(
            f'model "{model_id}": the connection broke while the answer was streamed '
            f"({type(exc).__name__}); try again"
        )
    return None


def broken_stream(model_id: str) -> ModelConnectionError:
    """The stream ended without the provider's end marker: the answer is incomplete."""
    return ModelConnectionError(
        f'model "{model_id}": the answer stopped before its end (the stream was cut); try again'
    )


def parsed_tool_call(call_id: str, name: str, raw: str | None, *, cut_off: bool) -> ToolCall:
    """A tool call from its JSON arguments as the provider sent them. Arguments that are not a
    JSON object make a call the loop refuses to run (``malformed``) rather than one run on
    ``{}``: ``cut_off`` (the output limit ended the response) says why they may be incomplete."""
    try:
        value = json.loads(raw or "{}")
    except json.JSONDecodeError:
        value = None
    if isinstance(value, dict):
        return ToolCall(call_id, name, value)
    return malformed_tool_call(call_id, name, cut_off=cut_off)


def malformed_tool_call(call_id: str, name: str, *, cut_off: bool) -> ToolCall:
    """A tool call the loop answers instead of running: its arguments were cut off at the
    output limit (``cut_off``) or are not a JSON object."""
    reason = (
        "its arguments were cut off at the output token limit; call it again with shorter input"
        if cut_off
        else "its arguments were not a JSON object; call it again with a JSON object"
    )
    return ToolCall(call_id, name, {}, malformed=reason)
