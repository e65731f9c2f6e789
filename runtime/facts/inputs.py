"""Input models of the facts tools (``Remember``, ``Recall``, ``MemoryRead``, ``MemoryForget``):
pydantic, ``extra="forbid"``, every field described (they become the JSON schema the model
reads). ``runtime.facts.tools`` names them lazily, so this module and pydantic load on a facts
tool's first call, not when a session lists its tools.

They declare the store's bounds and attach its ``unstorable`` rule; the TTL floor and ceiling
and the required justification are the tools' own rules (``runtime.facts.tools``).
"""

from __future__ import annotations

import functools
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, Field, StringConstraints, create_model
from pydantic_core import PydanticCustomError

from specwire.runtime.core.fragment import MS_PER_DAY, TTL_MAX_DAYS, TTL_MIN_MS
from specwire.runtime.core.ids import MEMORY_ID_RE
from specwire.runtime.core.scopes import Scope
from specwire.runtime.core.tool_types import ToolInput
from specwire.runtime.facts.model import (
    MAX_KEY_CHARS,
    MAX_REASON_CHARS,
    MAX_RECALL_K,
    MAX_TAG_CHARS,
    MAX_TAGS,
    MAX_TEXT_CHARS,
)
from specwire.runtime.facts.tools import ttl_days_to_ms
from specwire.runtime.facts.validation import unstorable

# The same bounds as the spec's `memory.ttl`: both come from the contract (runtime.core.fragment).
MIN_TTL_MS = TTL_MIN_MS
MAX_TTL_DAYS = TTL_MAX_DAYS


def _storable(value: str) -> str:
    """The store's ``unstorable`` rule, reported as an input error naming the field."""
    problem = unstorable(value)
    if problem is not None:
        raise PydanticCustomError("storable_text", problem)
    return value


Tag = Annotated[
    str, StringConstraints(min_length=1, max_length=MAX_TAG_CHARS), AfterValidator(_storable)
]


def _at_least_an_hour(days: float) -> float:
    # ``not >=`` also refuses NaN. Compared in whole milliseconds, as the handler stores it.
    if not ttl_days_to_ms(days) >= MIN_TTL_MS:
        raise PydanticCustomError(
            "ttl_below_floor",
            "must be at least 1 hour (1/24 ≈ 0.0417 days; got {days}) — a shorter lifetime "
            "expires the fact mid-session. Omit ttlDays to keep the spec's default lifetime.",
            {"days": days},
        )
    return days


TtlDays = Annotated[
    float,
    Field(le=MAX_TTL_DAYS, json_schema_extra={"minimum": MIN_TTL_MS / MS_PER_DAY}),
    AfterValidator(_at_least_an_hour),
]


class _Input(ToolInput):
    pass


class RememberInput(_Input):
    text: Annotated[str, AfterValidator(_storable)] = Field(
        min_length=1,
        max_length=MAX_TEXT_CHARS,
        description="The fact to remember. One short, self-contained sentence.",
    )
    tags: list[Tag] | None = Field(
        default=None,
        max_length=MAX_TAGS,
        description="Optional short labels to group the fact (at most 8).",
    )
    ttlDays: TtlDays | None = Field(
        default=None,
        description="Forget the fact automatically after this many days: at least 1 hour "
        f"(0.0417), at most {TTL_MAX_DAYS} (omit to keep the spec's default lifetime).",
    )

    key: str | None = Field(
        default=None,
        min_length=1,
        max_length=MAX_KEY_CHARS,
        pattern=r"^[^\x00-\x1f\x7f]+$",
        description="Optional name for this fact (e.g. 'preferred-language'). Remembering "
        "again with the same key replaces the earlier fact instead of adding a second one.",
    )


_SCOPE_WORDS: dict[str, str] = {
    "user": "the person you are talking to (recalled only in their private conversations)",
    "conversation": "this conversation (everyone in it)",
    "role": "your role only",
    "crew": "every role of the crew",
    "agent": "everyone who talks to this agent",
}


@functools.cache
def scoped_remember_input(choices: tuple[Scope, ...]) -> type[RememberInput]:
    """``RememberInput`` with a ``scope`` field naming only ``choices`` (cached: at most one
    class per set of scopes, so a per-turn wiring never makes a new one)."""
    described = "; ".join(f"{name}: {_SCOPE_WORDS[name]}" for name in choices)
    allowed: Any = Literal[choices]  # a Literal of exactly these names, made at run time
    model: type[RememberInput] = create_model(
        "ScopedRememberInput",
        __base__=RememberInput,
        scope=(
            allowed | None,
            Field(
                default=None,
                description="Who may see this fact later (omit for the default). " + described,
            ),
        ),
    )
    return model


class MemoryReadInput(_Input):
    id: str | None = Field(
        default=None,
        pattern=MEMORY_ID_RE.pattern,
        description="The id of one memory (its `source` in Recall results).",
    )
    key: str | None = Field(
        default=None,
        min_length=1,
        max_length=MAX_KEY_CHARS,
        pattern=r"^[^\x00-\x1f\x7f]+$",
        description="The key a memory was remembered under.",
    )


class RecallInput(_Input):
    query: str = Field(min_length=1, description="What to look for, in plain words.")
    k: int | None = Field(
        default=None,
        ge=1,
        le=MAX_RECALL_K,
        description="How many memories to return at most (1-50; defaults to the spec's "
        "recall size).",
    )


class MemoryForgetInput(_Input):
    id: str | None = Field(
        default=None,
        pattern=MEMORY_ID_RE.pattern,
        description="The id of one memory to forget (mem_ followed by 16 hex digits). "
        "Only that memory is forgotten.",
    )
    query: str | None = Field(
        default=None,
        min_length=1,
        description="Forget every memory that contains all of these words (common words such "
        "as 'the' are ignored; a memory missing any of the words is kept). Use `id` to forget "
        "just one.",
    )
    reason: str | None = Field(
        default=None,
        min_length=1,
        max_length=MAX_REASON_CHARS,
        description="Why the memory is being forgotten (kept with the record).",
    )
    # MemoryForget requires a justification (REFERENCE §1.6): `Tool.invoke` refuses the call
    # without one. It is also the fallback reason, so the tombstone records why.
    justification: str = Field(
        min_length=1,
        max_length=MAX_REASON_CHARS,
        description="A short justification for forgetting, checked against the instructions.",
    )
