"""OpenComputer's HTTP memory contract, version 1: the wire both sides speak (docs/opencomputer.md).

Every call is one ``POST`` of a JSON object with ``version: 1`` to the endpoint's path. A
**recall** ``{version, operation: "recall", operationId, partition, access, deadlineAt, input:
{text | null}, maxBytes}`` answers 200 ``{text, sources: [{id, title?, revision?, updatedAt?}],
cursor?}``; a **tool** call ``{version, operation: "tool", operationId, partition, access,
deadlineAt, tool, arguments, cursor?}`` answers 200 ``{result}``. Every error is ``{error: {code,
message, details?}}``. This module holds the contract's constants, builds and checks the bodies
and replies (plain JSON values: no pydantic, so the server's checks and the client's are the
same functions), and nothing that does I/O.
"""

from __future__ import annotations

import email.utils
import hashlib
import json
import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Final, Literal

from specwire.runtime.core.fragment import (
    MAX_MEMORY_TOOLS,
    MEMORY_TOOL_NAME_PATTERN,
    RECALL_MAX_BYTES_CEILING,
    RECALL_MAX_BYTES_DEFAULT,
)

VERSION: Final = 1
DEFAULT_PATH: Final = "/memory"
PATH_RE: Final = re.compile(r"^/(?!/)[^?#\s]*$")
PARTITION_PREFIX: Final = "ocmem_v1_"
# One call's deadline, every attempt and pause included.
CALL_DEADLINE_S: Final = 10.0
# The pauses before the first and the second retry (a valid Retry-After that fits the
# deadline takes precedence).
RETRY_DELAYS_S: Final[tuple[float, ...]] = (0.25, 1.0)
MAX_RETRIES: Final = len(RETRY_DELAYS_S)
MAX_BODY_BYTES: Final = 64 * 1024
MAX_SOURCES: Final = 100
# A source id, a cursor, an operation id or a partition: UTF-8 bytes.
MAX_REF_BYTES: Final = 1024
MAX_TOOLS: Final = MAX_MEMORY_TOOLS
TOOL_NAME_RE: Final = re.compile(MEMORY_TOOL_NAME_PATTERN)
MAX_BYTES_DEFAULT: Final = RECALL_MAX_BYTES_DEFAULT
MAX_BYTES_CEILING: Final = RECALL_MAX_BYTES_CEILING

Access = Literal["read", "read-write"]
ACCESS: Final[tuple[Access, ...]] = ("read", "read-write")
Operation = Literal["recall", "tool"]
# What a write tool's result says (the endpoint's word, passed to the model unchanged).
WRITE_STATUSES: Final = ("stored", "accepted")
# What the model receives for a non-idempotent write whose outcome is unknown.
UNCERTAIN: Final = {"status": "uncertain"}


def retryable_status(status: int) -> bool:
    """Transport failures, 408, 429 and 5xx are retried; nothing else."""
    return status in (408, 429) or 500 <= status <= 599


class WireError(ValueError):
    """A body or reply that breaks the contract; ``field`` names the part at fault."""

    def __init__(self, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field


def utf8_len(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


def encode(value: Any) -> bytes:
    """Compact JSON, the bytes every attempt sends (so retries carry the same body)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()


def derive_partition(tenant: str, spec: str, namespace: str) -> str:
    """specwire's partition key for a tenant's spec and a namespace (the memory scope key):
    stable, opaque, different for every triple. An identifier, not a secret."""
    digest = hashlib.sha256(encode(["specwire", tenant, spec, namespace])).hexdigest()
    return PARTITION_PREFIX + digest[:40]


def format_deadline(moment: datetime) -> str:
    """``deadlineAt``: ISO 8601 UTC with milliseconds and ``Z``."""
    utc = moment.astimezone(UTC)
    return utc.strftime("%Y-%m-%dT%H:%M:%S.") + f"{utc.microsecond // 1000:03d}Z"


def parse_instant(text: str) -> datetime | None:
    """An ISO 8601 timestamp with a zone (``Z`` or an offset), else None."""
    try:
        parsed = datetime.fromisoformat(text.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo is not None else None


def retry_after_s(value: str | None, now: datetime) -> float | None:
    """A ``Retry-After`` header in seconds: delta-seconds or an HTTP date (None when invalid)."""
    if value is None:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        return None
    return max(0.0, (when - now).total_seconds())


# -- requests ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class RecallCall:
    operation_id: str
    partition: str
    access: Access
    deadline_at: datetime
    text: str | None
    max_bytes: int


@dataclass(frozen=True)
class ToolCall:
    operation_id: str
    partition: str
    access: Access
    deadline_at: datetime
    tool: str
    arguments: dict[str, Any]
    cursor: str | None


def recall_body(call: RecallCall) -> dict[str, Any]:
    return {
        "version": VERSION,
        "operation": "recall",
        "operationId": call.operation_id,
        "partition": call.partition,
        "access": call.access,
        "deadlineAt": format_deadline(call.deadline_at),
        "input": {"text": call.text},
        "maxBytes": call.max_bytes,
    }


def tool_body(call: ToolCall) -> dict[str, Any]:
    body: dict[str, Any] = {
        "version": VERSION,
        "operation": "tool",
        "operationId": call.operation_id,
        "partition": call.partition,
        "access": call.access,
        "deadlineAt": format_deadline(call.deadline_at),
        "tool": call.tool,
        "arguments": call.arguments,
    }
    if call.cursor is not None:
        body["cursor"] = call.cursor
    return body


_COMMON_KEYS: Final = frozenset(
    {"version", "operation", "operationId", "partition", "access", "deadlineAt"}
)
_RECALL_KEYS: Final = _COMMON_KEYS | {"input", "maxBytes"}
_TOOL_KEYS: Final = _COMMON_KEYS | {"tool", "arguments", "cursor"}


def parse_call(payload: Any) -> RecallCall | ToolCall:
    """A request body as the endpoint reads it; ``WireError`` names the first field at fault."""
    if not isinstance(payload, dict):
        raise WireError("the body must be a JSON object")
    if payload.get("version") != VERSION or isinstance(payload.get("version"), bool):
        raise WireError(f"version must be {VERSION}", "version")
    operation = payload.get("operation")
    if operation not in ("recall", "tool"):
        raise WireError('operation must be "recall" or "tool"', "operation")
    allowed = _RECALL_KEYS if operation == "recall" else _TOOL_KEYS
    unknown = sorted(key for key in payload if key not in allowed)
    if unknown:
        raise WireError(f"unknown field {unknown[0]!r}", unknown[0])
    operation_id = _ref(payload, "operationId")
    partition = _ref(payload, "partition")
    access = payload.get("access")
    if access not in ACCESS:
        raise WireError('access must be "read" or "read-write"', "access")
    raw_deadline = payload.get("deadlineAt")
    deadline = parse_instant(raw_deadline) if isinstance(raw_deadline, str) else None
    if deadline is None:
        raise WireError("deadlineAt must be an ISO 8601 timestamp with a zone", "deadlineAt")
    if operation == "recall":
        given = payload.get("input")
        if not isinstance(given, dict) or set(given) != {"text"}:
            raise WireError("input must be {text: string | null}", "input")
        text = given["text"]
        if text is not None and not isinstance(text, str):
            raise WireError("input.text must be a string or null", "input.text")
        max_bytes = payload.get("maxBytes")
        if (
            not isinstance(max_bytes, int)
            or isinstance(max_bytes, bool)
            or not 1 <= max_bytes <= MAX_BYTES_CEILING
        ):
            raise WireError(
                f"maxBytes must be a whole number, 1 to {MAX_BYTES_CEILING}", "maxBytes"
            )
        return RecallCall(operation_id, partition, access, deadline, text, max_bytes)
    tool = payload.get("tool")
    if not isinstance(tool, str) or TOOL_NAME_RE.fullmatch(tool) is None:
        raise WireError("tool must be 1 to 32 lower-case letters, digits and underscores", "tool")
    arguments = payload.get("arguments")
    if not isinstance(arguments, dict):
        raise WireError("arguments must be a JSON object", "arguments")
    cursor = _ref(payload, "cursor") if "cursor" in payload else None
    return ToolCall(operation_id, partition, access, deadline, tool, arguments, cursor)


def _ref(payload: dict[str, Any], key: str) -> str:
    value = payload.get(key)
    if not isinstance(value, str) or not value or utf8_len(value) > MAX_REF_BYTES:
        raise WireError(f"{key} must be a non-empty string of at most {MAX_REF_BYTES} bytes", key)
    return value


# -- replies -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Source:
    id: str
    title: str | None = None
    revision: str | None = None
    updated_at: str | None = None

    def wire(self) -> dict[str, str]:
        found = {"id": self.id, "title": self.title}
        found |= {"revision": self.revision, "updatedAt": self.updated_at}
        return {key: value for key, value in found.items() if value is not None}


@dataclass(frozen=True)
class Recalled:
    """A recall's projection: the text block, its sources and the provider's read state."""

    text: str
    sources: tuple[Source, ...]
    cursor: str | None = None

    def wire(self) -> dict[str, Any]:
        reply: dict[str, Any] = {"text": self.text, "sources": [s.wire() for s in self.sources]}
        if self.cursor is not None:
            reply["cursor"] = self.cursor
        return reply


def parse_recalled(payload: Any, max_bytes: int) -> Recalled:
    """A recall reply, checked: ``WireError`` when it breaks the contract or its limits."""
    if not isinstance(payload, dict):
        raise WireError("the recall reply must be a JSON object")
    unknown = sorted(key for key in payload if key not in ("text", "sources", "cursor"))
    if unknown:
        raise WireError(f"the recall reply has an unknown field {unknown[0]!r}", unknown[0])
    text = payload.get("text")
    if not isinstance(text, str):
        raise WireError("the recall reply's text must be a string", "text")
    if utf8_len(text) > max_bytes:
        raise WireError(
            f"the recalled text is {utf8_len(text)} bytes, over maxBytes ({max_bytes})", "text"
        )
    raw_sources = payload.get("sources")
    if not isinstance(raw_sources, list):
        raise WireError("the recall reply's sources must be a list", "sources")
    if len(raw_sources) > MAX_SOURCES:
        raise WireError(f"the recall reply has more than {MAX_SOURCES} sources", "sources")
    sources = tuple(_source(item, index) for index, item in enumerate(raw_sources))
    cursor = payload.get("cursor")
    if cursor is not None and (
        not isinstance(cursor, str) or not cursor or utf8_len(cursor) > MAX_REF_BYTES
    ):
        raise WireError(f"the cursor must be a string of 1 to {MAX_REF_BYTES} bytes", "cursor")
    return Recalled(text, sources, cursor)


def _source(item: Any, index: int) -> Source:
    where = f"sources[{index}]"
    if not isinstance(item, dict):
        raise WireError(f"{where} must be an object", where)
    unknown = sorted(key for key in item if key not in ("id", "title", "revision", "updatedAt"))
    if unknown:
        raise WireError(f"{where} has an unknown field {unknown[0]!r}", where)
    source_id = item.get("id")
    if not isinstance(source_id, str) or not source_id or utf8_len(source_id) > MAX_REF_BYTES:
        raise WireError(f"{where}.id must be a string of 1 to {MAX_REF_BYTES} bytes", where)
    for key in ("title", "revision", "updatedAt"):
        if key in item and not isinstance(item[key], str):
            raise WireError(f"{where}.{key} must be a string", where)
    updated = item.get("updatedAt")
    if updated is not None and parse_instant(updated) is None:
        raise WireError(f"{where}.updatedAt must be an ISO 8601 timestamp", where)
    return Source(source_id, item.get("title"), item.get("revision"), updated)


def parse_result(payload: Any) -> Any:
    """A tool reply's ``result`` (any JSON value)."""
    if not isinstance(payload, dict) or set(payload) != {"result"}:
        raise WireError("the tool reply must be {result: <any JSON value>}")
    return payload["result"]


@dataclass(frozen=True)
class Envelope:
    """``{error: {code, message, details?}}``."""

    code: str
    message: str
    details: Any = None

    def wire(self) -> dict[str, Any]:
        error: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.details is not None:
            error["details"] = self.details
        return {"error": error}


def parse_envelope(payload: Any) -> Envelope | None:
    if not isinstance(payload, dict) or not isinstance(payload.get("error"), dict):
        return None
    error = payload["error"]
    code, message = error.get("code"), error.get("message")
    if not isinstance(code, str) or not isinstance(message, str):
        return None
    return Envelope(code, message, error.get("details"))


def deadline_in(seconds: float, now: datetime) -> datetime:
    """``now`` plus ``seconds``, rounded down to the millisecond ``deadlineAt`` carries."""
    moment = now + timedelta(seconds=seconds)
    return moment.replace(microsecond=moment.microsecond // 1000 * 1000)


def clip_utf8(text: str, max_bytes: int) -> str:
    """``text`` cut to at most ``max_bytes`` UTF-8 bytes, never inside a character."""
    raw = text.encode("utf-8", "surrogatepass")
    if len(raw) <= max_bytes:
        return text
    return raw[: max(0, max_bytes)].decode("utf-8", "ignore")
