"""Constrained value types of the spec language, each with its own message and JSON Schema.

Each type refuses bad values with a ``PydanticCustomError`` whose message is final (short,
lowercase-first, naming what was expected and what was given); ``ir.translate`` passes these
messages through unchanged.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Annotated, Any, Final, Literal, NoReturn
from urllib.parse import urlsplit

from pydantic import AfterValidator, BeforeValidator, PlainValidator, WithJsonSchema
from pydantic_core import PydanticCustomError

from specwire.ir.constants import (
    BRANCHING_MAX,
    BRANCHING_MIN,
    BUILTIN_TOOLS,
    EMBEDDER_RE,
    KNOWN_BACKENDS,
    MANAGED_TOOLS,
    NAME_RE,
    RECALL_K_MAX,
    RECALL_K_MIN,
    SECRET_REF_RE,
    TENANT_ID_RE,
    TIER_TOOL_SPELLINGS,
    TTL_MAX_DAYS,
    UNFENCEABLE_TOOLS,
    embedder_problem,
)
from specwire.ir.durations import DAY_MS, DURATION_RE, HOUR_MS, parse_duration_ms
from specwire.ir.limits import MAX_NAME_LENGTH
from specwire.ir.suggest import did_you_mean
from specwire.ir.text import code_point, line_breaker
from specwire.ir.values import got, quote
from specwire.runtime.core.fragment import (
    BASH_LIMITS,
    DREAM_EVERY_MAX_DAYS,
    DREAM_EVERY_MIN_MS,
    MEMORY_TOOL_NAME_PATTERN,
    RECALL_MODES,
    RESERVED_MEMORY_TOOL_NAMES,
    RESOURCE_ID_MAX_LENGTH,
    RESOURCE_ID_PATTERN,
    ROUTED_BACKENDS,
    DreamModeName,
)

CUSTOM_ERROR = "spec"


def fail(message: str) -> NoReturn:
    raise PydanticCustomError(CUSTOM_ERROR, "{message}", {"message": message})


# -- integers ---------------------------------------------------------------------------------


def _between(low: int, high: int) -> Callable[[int], int]:
    def check(value: int) -> int:
        if not low <= value <= high:
            fail(f"must be between {low} and {high} {got(value)}")
        return value

    return check


def _at_least(low: int) -> Callable[[int], int]:
    def check(value: int) -> int:
        if value < low:
            fail(
                f"must be greater than 0 {got(value)}"
                if low == 1
                else f"must be {low} or more {got(value)}"
            )
        return value

    return check


RecallK = Annotated[
    int,
    AfterValidator(_between(RECALL_K_MIN, RECALL_K_MAX)),
    WithJsonSchema({"type": "integer", "minimum": RECALL_K_MIN, "maximum": RECALL_K_MAX}),
]
BranchingFactor = Annotated[
    int,
    AfterValidator(_between(BRANCHING_MIN, BRANCHING_MAX)),
    WithJsonSchema({"type": "integer", "minimum": BRANCHING_MIN, "maximum": BRANCHING_MAX}),
]
# The bash tool's per-call limits, bounded as the runtime bounds them.
BashMemoryMb = Annotated[
    int,
    AfterValidator(_between(1, BASH_LIMITS["memoryMb"][1])),
    WithJsonSchema({"type": "integer", "minimum": 1, "maximum": BASH_LIMITS["memoryMb"][1]}),
]
BashProcesses = Annotated[
    int,
    AfterValidator(_between(1, BASH_LIMITS["processes"][1])),
    WithJsonSchema({"type": "integer", "minimum": 1, "maximum": BASH_LIMITS["processes"][1]}),
]
BashFileSizeMb = Annotated[
    int,
    AfterValidator(_between(1, BASH_LIMITS["fileSizeMb"][1])),
    WithJsonSchema({"type": "integer", "minimum": 1, "maximum": BASH_LIMITS["fileSizeMb"][1]}),
]
BashCpuSeconds = Annotated[
    int,
    AfterValidator(_between(1, BASH_LIMITS["cpuSeconds"][1])),
    WithJsonSchema({"type": "integer", "minimum": 1, "maximum": BASH_LIMITS["cpuSeconds"][1]}),
]
BashNetwork = Literal["none", "outbound"]
PositiveInt = Annotated[
    int, AfterValidator(_at_least(1)), WithJsonSchema({"type": "integer", "minimum": 1})
]
# A research run's time budget: at most a week (the host turns it into seconds and a deadline).
MAX_DURATION_MS = 7 * 24 * 60 * 60 * 1000
DurationMs = Annotated[
    int,
    AfterValidator(_between(1, MAX_DURATION_MS)),
    WithJsonSchema({"type": "integer", "minimum": 1, "maximum": MAX_DURATION_MS}),
]
NonNegativeInt = Annotated[
    int, AfterValidator(_at_least(0)), WithJsonSchema({"type": "integer", "minimum": 0})
]


# -- strings ----------------------------------------------------------------------------------


def _non_blank(value: str) -> str:
    if not value.strip():
        fail(f"must not be empty {got(value)}")
    return value


def _one_line(value: str) -> str:
    bad = line_breaker(value)
    if bad is not None:
        fail(f"must be one line of printable text (this one has {code_point(bad)}) {got(value)}")
    return value


def _named(value: str) -> str:
    if NAME_RE.fullmatch(value) is None:
        fail(f'must contain only letters, digits, spaces, "_", ".", ":" and "-" {got(value)}')
    return value


# The spec's name is also its bundle's output directory (`<out>/<name>/`).
SPEC_NAME_PATTERN: Final = r"^(?:[\w.:-][\w .:-]*)?[\w:-](?:[\w .:-]*[\w.:-])?$"
# Names Windows keeps for devices, with or without an extension (`con`, `nul.txt`, `com1`).
_DEVICE_NAMES: Final = frozenset(
    {"con", "prn", "aux", "nul", *(f"{port}{n}" for port in ("com", "lpt") for n in range(10))}
)


def _spec_name(value: str) -> str:
    if len(value) > MAX_NAME_LENGTH:
        fail(
            f"is {len(value)} characters long: at most {MAX_NAME_LENGTH}, because it names the "
            f"bundle's directory and its store files {got(value)}"
        )
    _named(value)
    if not value.strip(". "):
        fail(f"must not be only dots and spaces: it names the bundle's directory {got(value)}")
    if value != value.strip(" "):
        fail(f"must not start or end with a space: it names the bundle's directory {got(value)}")
    if value.split(".", 1)[0].rstrip(" ").lower() in _DEVICE_NAMES:
        fail(
            f"{quote(value)} is a device name on Windows and cannot name the bundle's directory "
            "there; choose another name"
        )
    return value


def _tool_among(known: tuple[str, ...]) -> Callable[[str], str]:
    def check(value: str) -> str:
        if value not in known and value not in TIER_TOOL_SPELLINGS:
            hint = did_you_mean(value, known) or f": expected one of {', '.join(known)}"
            fail(f"unknown builtin tool {quote(value)}{hint}")
        return value

    return check


_tool = _tool_among(BUILTIN_TOOLS)
_any_managed_tool = _tool_among(MANAGED_TOOLS)


def _managed_tool(value: str) -> str:
    if value in UNFENCEABLE_TOOLS:
        fail(
            f"{quote(value)} cannot be fenced to a tenant (it can reach every tenant's files), "
            "so the managed target does not offer it"
        )
    return _any_managed_tool(value)


def _secret_shape(value: str) -> None:
    """A ``$``-prefixed string must be a well-formed secret reference."""
    if value.startswith("$") and SECRET_REF_RE.fullmatch(value) is None:
        fail(f"malformed secret reference {quote(value)}: use $UPPER_SNAKE")


def _model_id(value: str) -> str:
    _non_blank(value)
    _one_line(value)
    _secret_shape(value)
    return value


def _backend(value: str) -> str:
    if value not in KNOWN_BACKENDS:
        fail(f"unknown backend {quote(value)}: known backends: {', '.join(KNOWN_BACKENDS)}")
    return value


def _secret_ref(value: str) -> str:
    """A field that only takes a secret reference: a literal would be baked into the bundle."""
    _secret_shape(value)
    if SECRET_REF_RE.fullmatch(value) is None:
        fail(
            "must be a secret reference ($UPPER_SNAKE, read from the environment at run time): "
            "a literal connection setting would be baked into the bundle"
        )
    return value


_SERVICE_URL_RE: Final = re.compile(r"https?://[^\s/?#@]+(?:/[^\s?#]*)?")


def _valid_port(url: str) -> bool:
    try:
        urlsplit(url).port  # noqa: B018 - raises on a port that is not 0..65535
    except ValueError:
        return False
    return True


def _service_url(value: str) -> str:
    """A memory service's base URL: a ``$REF`` or an http(s) URL without credentials."""
    _secret_shape(value)
    if SECRET_REF_RE.fullmatch(value) is not None:
        return value
    if _SERVICE_URL_RE.fullmatch(value) is None or not _valid_port(value):
        fail(
            "must be an http:// or https:// URL (a host, an optional port up to 65535, no user "
            "or password: the token goes in `token`), or a secret reference such as $MEMORY_URL"
        )
    return value


def _embedder(value: str) -> str:
    if EMBEDDER_RE.fullmatch(value) is None:
        fail(
            'expected "provider/model" such as "hash/256" or '
            f'"openai/text-embedding-3-small" {got(value)}'
        )
    problem = embedder_problem(value)
    if problem is not None:
        fail(problem)
    return value


def _tenant_id(value: str) -> str:
    if TENANT_ID_RE.fullmatch(value) is None:
        fail(
            'must start with a letter or digit and contain only letters, digits, "_" and "-", '
            f"at most 64 characters {got(value)}"
        )
    return value


def _ttl(value: Any) -> Any:
    if not isinstance(value, str) or DURATION_RE.fullmatch(value) is None:
        fail(f'expected a duration such as "90d" or "12h" {got(value)}')
    millis = parse_duration_ms(value)
    if millis is not None and millis < HOUR_MS:
        fail(
            f"{quote(value)} is below the 1h floor — a sub-hour fact TTL expires memories "
            'mid-session. Use "1h" or longer (e.g. "90d"), or omit ttl to keep facts forever.'
        )
    if millis is not None and millis > TTL_MAX_DAYS * DAY_MS:
        fail(
            f"{quote(value)} is above the {TTL_MAX_DAYS}d ceiling (10 years, the longest a "
            f'remembered fact may be kept). Use "{TTL_MAX_DAYS}d" or less, or omit ttl to keep '
            "facts forever."
        )
    return value


def _dream_every(value: Any) -> Any:
    if not isinstance(value, str) or DURATION_RE.fullmatch(value) is None:
        fail(f'expected a duration such as "6h" or "1d" {got(value)}')
    millis = parse_duration_ms(value)
    if millis is not None and millis < DREAM_EVERY_MIN_MS:
        fail(
            f"{quote(value)} is below the 5m floor — a dream consolidates the whole memory and "
            'must not run more often than every five minutes. Use "5m" or longer (e.g. "1d").'
        )
    if millis is not None and millis > DREAM_EVERY_MAX_DAYS * DAY_MS:
        fail(f'{quote(value)} is above the {DREAM_EVERY_MAX_DAYS}d ceiling. Use "1d" or so.')
    return value


def _auto_recall(value: Any) -> bool | str:
    if isinstance(value, bool) or (isinstance(value, str) and value in RECALL_MODES):
        return value
    fail(f'expected true, false, "session-start" or "per-turn" {got(value)}')


def _budget_usd(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        fail(f"expected a number of US dollars such as 0.5 {got(value)}")
    if not math.isfinite(value) or value < 0:
        fail(f"must be a finite number of 0 or more {got(value)}")
    return float(value)


NonEmptyStr = Annotated[
    str,
    AfterValidator(_non_blank),
    WithJsonSchema({"type": "string", "minLength": 1, "pattern": "\\S"}),
]
# A short value on one line: a setting's name, an origin.
_LINE: Final = "[^\\x00-\\x1f\\x7f-\\x9f\\u2028\\u2029]"
OneLineStr = Annotated[
    str,
    AfterValidator(_non_blank),
    AfterValidator(_one_line),
    WithJsonSchema({"type": "string", "pattern": f"^{_LINE}*\\S{_LINE}*$"}),
]
Name = Annotated[
    str,
    AfterValidator(_named),
    WithJsonSchema({"type": "string", "pattern": f"^{NAME_RE.pattern}$"}),
]
SpecName = Annotated[
    str,
    AfterValidator(_spec_name),
    WithJsonSchema({"type": "string", "pattern": SPEC_NAME_PATTERN, "maxLength": MAX_NAME_LENGTH}),
]
ModelId = Annotated[
    str,
    AfterValidator(_model_id),
    WithJsonSchema(
        {
            "type": "string",
            "minLength": 1,
            "pattern": "\\S",
            "description": "a model id, or a $UPPER_SNAKE secret reference read from the "
            "environment at run time",
        }
    ),
]
# A crew role's `modelPool` / `modelFallbacks`: 1..MAX_ROLE_MODELS model ids (duplicates and
# ids that repeat the role's own model are reported by ``ir.checks``, at the item).
MAX_ROLE_MODELS: Final = 8


def _model_list(value: Any) -> Any:
    if isinstance(value, list):
        if not value:
            fail("must list at least one model id")
        if len(value) > MAX_ROLE_MODELS:
            fail(f"must list at most {MAX_ROLE_MODELS} model ids (got {len(value)})")
    return value


ModelIdList = Annotated[
    list[ModelId],
    BeforeValidator(_model_list),
    WithJsonSchema(
        {
            "type": "array",
            "items": {
                "type": "string",
                "minLength": 1,
                "pattern": "\\S",
                "description": "a model id, or a $UPPER_SNAKE secret reference read from the "
                "environment at run time",
            },
            "minItems": 1,
            "maxItems": MAX_ROLE_MODELS,
            "uniqueItems": True,
        }
    ),
]
ToolName = Annotated[
    str,
    AfterValidator(_tool),
    WithJsonSchema({"type": "string", "enum": [*BUILTIN_TOOLS, *TIER_TOOL_SPELLINGS]}),
]
ManagedToolName = Annotated[
    str,
    AfterValidator(_managed_tool),
    WithJsonSchema({"type": "string", "enum": [*MANAGED_TOOLS, *TIER_TOOL_SPELLINGS]}),
]
Backend = Annotated[
    str, AfterValidator(_backend), WithJsonSchema({"type": "string", "enum": list(KNOWN_BACKENDS)})
]
SecretRef = Annotated[
    str,
    AfterValidator(_secret_ref),
    WithJsonSchema(
        {
            "type": "string",
            "pattern": f"^{SECRET_REF_RE.pattern}$",
            "description": "a $UPPER_SNAKE secret reference read from the environment",
        }
    ),
]
ServiceUrl = Annotated[
    str,
    AfterValidator(_service_url),
    WithJsonSchema(
        {
            "type": "string",
            "description": "an http(s) URL without credentials, or a $UPPER_SNAKE secret "
            "reference read from the environment",
        }
    ),
]
Embedder = Annotated[
    str,
    AfterValidator(_embedder),
    WithJsonSchema({"type": "string", "pattern": f"^{EMBEDDER_RE.pattern}$"}),
]
TenantId = Annotated[
    str,
    AfterValidator(_tenant_id),
    WithJsonSchema({"type": "string", "pattern": f"^{TENANT_ID_RE.pattern}$"}),
]
Ttl = Annotated[
    str,
    BeforeValidator(_ttl),
    WithJsonSchema({"type": "string", "pattern": f"^{DURATION_RE.pattern}$"}),
]

DreamEvery = Annotated[
    str,
    BeforeValidator(_dream_every),
    WithJsonSchema({"type": "string", "pattern": f"^{DURATION_RE.pattern}$"}),
]
AutoRecall = Annotated[
    bool | str,
    PlainValidator(_auto_recall),
    WithJsonSchema({"anyOf": [{"type": "boolean"}, {"enum": list(RECALL_MODES)}]}),
]
BudgetUsd = Annotated[
    float,
    PlainValidator(_budget_usd),
    WithJsonSchema({"type": "number", "minimum": 0}),
]
DreamMode = DreamModeName

Proof = Literal["ladder", "require", "off"]
Scope = Literal["auto", "spec", "session"]
# ``memory.scope``: whose memory a fact is by default (``auto``: the target's protective default).
MemoryScope = Literal["auto", "user", "conversation", "role", "agent", "crew"]
SessionKey = Literal["thread", "channel", "user"]


# -- channel settings -------------------------------------------------------------------------


def _setting(value: Any) -> str | int | float | bool:
    if isinstance(value, str):
        _one_line(value)
        _secret_shape(value)
        return value
    if isinstance(value, float) and not math.isfinite(value):
        fail(f"must be a finite number {got(value)}")
    if isinstance(value, bool | int | float):
        return value
    fail(f"expected a string, number or boolean {got(value)}")


SettingValue = Annotated[
    str | int | float | bool,
    PlainValidator(_setting),
    WithJsonSchema(
        {
            "anyOf": [
                {"type": "string"},
                {"type": "number"},
                {"type": "boolean"},
            ],
            "description": "a value, or a $UPPER_SNAKE secret reference read from the environment",
        }
    ),
]

# -- web origins (research's retrieve.allowedOrigins) -----------------------------------------

_ORIGIN_RE: Final = re.compile(
    r"(?P<scheme>https?)://(?P<host>\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?)"
    r"(?::(?P<port>[0-9]{1,5}))?/?"
)


def _origin(value: str) -> str:
    found = _ORIGIN_RE.fullmatch(value.strip())
    port = found.group("port") if found else None
    if found is None or (port is not None and not 0 < int(port) < 65536):
        fail(
            "must be an origin: http:// or https://, a host and an optional port, nothing "
            f"else (like https://example.org or http://127.0.0.1:8080) {got(value)}"
        )
    return value.strip().rstrip("/")


Origin = Annotated[
    str,
    AfterValidator(_non_blank),
    AfterValidator(_one_line),
    AfterValidator(_origin),
    WithJsonSchema({"type": "string", "pattern": "^https?://[^/?#@\\s]+/?$"}),
]

# -- several providers, provider tools, documents (fragment version 5) -------------------------

_RESOURCE_ID_RE: Final = re.compile(RESOURCE_ID_PATTERN)
_MEMORY_TOOL_NAME_RE: Final = re.compile(MEMORY_TOOL_NAME_PATTERN)


def _resource_id(value: str) -> str:
    if len(value) > RESOURCE_ID_MAX_LENGTH or _RESOURCE_ID_RE.fullmatch(value) is None:
        fail(
            "must be lower-case letters and digits in words joined by single hyphens, at most "
            f"{RESOURCE_ID_MAX_LENGTH} characters {got(value)}"
        )
    return value


def _memory_tool_name(value: str) -> str:
    if _MEMORY_TOOL_NAME_RE.fullmatch(value) is None:
        fail(f"must be 1 to 32 lower-case letters, digits and underscores {got(value)}")
    if value in RESERVED_MEMORY_TOOL_NAMES:
        fail(f"memory_{value} is one of specwire's own memory tools: choose another name")
    return value


def _routed_backend(value: str) -> str:
    if value not in ROUTED_BACKENDS:
        fail(f"unknown backend {quote(value)}: known backends: {', '.join(ROUTED_BACKENDS)}")
    return value


# The router's wait for one provider: at least 10 ms, at most the OpenComputer call deadline.
PROVIDER_DEADLINE_MAX_MS: Final = 10_000


def _provider_deadline(value: Any) -> Any:
    if not isinstance(value, str) or DURATION_RE.fullmatch(value) is None:
        fail(f'expected a duration such as "500ms" or "2s" {got(value)}')
    millis = parse_duration_ms(value)
    if millis is None or not 10 <= millis <= PROVIDER_DEADLINE_MAX_MS:
        fail(f"must be between 10ms and {PROVIDER_DEADLINE_MAX_MS // 1000}s {got(value)}")
    return value


ProviderDeadline = Annotated[
    str,
    BeforeValidator(_provider_deadline),
    WithJsonSchema({"type": "string", "pattern": f"^{DURATION_RE.pattern}$"}),
]
ResourceId = Annotated[
    str,
    AfterValidator(_resource_id),
    WithJsonSchema(
        {"type": "string", "pattern": RESOURCE_ID_PATTERN, "maxLength": RESOURCE_ID_MAX_LENGTH}
    ),
]
MemoryToolName = Annotated[
    str,
    AfterValidator(_memory_tool_name),
    WithJsonSchema({"type": "string", "pattern": MEMORY_TOOL_NAME_PATTERN}),
]
RoutedBackend = Annotated[
    str,
    AfterValidator(_routed_backend),
    WithJsonSchema({"type": "string", "enum": list(ROUTED_BACKENDS)}),
]

__all__ = [
    "AutoRecall",
    "MemoryToolName",
    "ProviderDeadline",
    "ResourceId",
    "RoutedBackend",
    "Backend",
    "BudgetUsd",
    "DreamEvery",
    "DreamMode",
    "SecretRef",
    "ServiceUrl",
    "Origin",
    "BashCpuSeconds",
    "BashFileSizeMb",
    "BashMemoryMb",
    "BashNetwork",
    "BashProcesses",
    "BranchingFactor",
    "Embedder",
    "ManagedToolName",
    "MAX_ROLE_MODELS",
    "ModelId",
    "ModelIdList",
    "Name",
    "NonEmptyStr",
    "NonNegativeInt",
    "OneLineStr",
    "PositiveInt",
    "DurationMs",
    "MAX_DURATION_MS",
    "Proof",
    "RecallK",
    "MemoryScope",
    "Scope",
    "SessionKey",
    "SettingValue",
    "SpecName",
    "TenantId",
    "ToolName",
    "Ttl",
    "fail",
]
