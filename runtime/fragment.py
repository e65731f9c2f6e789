"""The compiler ↔ runtime contract: the memory wiring fragment.

The compiler lowers a spec into a ``MemoryWiringFragment``; a generated bundle embeds it as a
literal and hands it to ``wire_memory``. It carries only knobs the runtime really wires and only
fields the user declared (``None`` means "not declared": the runtime applies its default), so
adding a knob never changes the bytes of bundles that do not use it.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

ProofMode = Literal["ladder", "require", "off"]
ContinuityScope = Literal["spec", "session"]

# Ids the stores mint and the tools accept: four digits at least, more once 9999 is passed.
PLAN_ID_PATTERN = r"^plan-(\d{4,})$"
GOAL_ID_PATTERN = r"^goal-(\d{4,})$"

# Runtime defaults for undeclared memory knobs (DESIGN §3).
DEFAULT_AUTO_RECALL = True
DEFAULT_AUTO_CAPTURE = False
DEFAULT_RECALL_K = 5
DEFAULT_AUTO_CAPTURE_THRESHOLD = 1
DEFAULT_WIKI_RECALL_K = 6
DEFAULT_FOCUS_MAX_CHARS = 4096


class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class WikiFragment(_Frozen):
    enabled: bool | None = None
    recall_k: int | None = Field(default=None, ge=1, le=50)
    embedder: str | None = None
    auto_recall: bool | None = None
    require_sources: bool | None = None


class MemoryFactsFragment(_Frozen):
    enabled: bool | None = None
    # A string, not a closed enum: the runtime names the backends it knows when it refuses one.
    backend: str | None = None
    embedder: str | None = None
    ttl_ms: int | None = Field(default=None, gt=0)
    auto_capture: bool | None = None
    auto_capture_threshold: int | None = Field(default=None, gt=0)
    auto_recall: bool | None = None
    recall_k: int | None = Field(default=None, ge=1, le=50)
    wiki: WikiFragment | None = None


class ContinuityFragment(_Frozen):
    """Resolved continuity settings: every field but ``focus_max_chars`` is always present."""

    plan: bool = True
    proof: ProofMode = "ladder"
    ledger: bool = True
    handoff: bool = True
    scope: ContinuityScope = "spec"
    focus_max_chars: int | None = Field(default=None, gt=0)


class MemoryWiringFragment(_Frozen):
    spec_name: str
    memory: MemoryFactsFragment | None = None
    continuity: ContinuityFragment | None = None

    @property
    def is_memoryless(self) -> bool:
        return self.memory is None and self.continuity is None

    def to_data(self) -> dict[str, Any]:
        """The minimal JSON-ready form: undeclared (None) fields are left out."""
        return self.model_dump(mode="json", exclude_none=True)

    def to_json(self) -> str:
        return json.dumps(self.to_data(), separators=(",", ":"), ensure_ascii=False)

    @classmethod
    def from_json(cls, text: str) -> MemoryWiringFragment:
        return cls.model_validate_json(text)


def fragment_json_schema() -> dict[str, Any]:
    return MemoryWiringFragment.model_json_schema()


def memory_enabled(fragment: MemoryWiringFragment) -> bool:
    return fragment.memory is not None and fragment.memory.enabled is not False


def continuity_enabled(fragment: MemoryWiringFragment) -> bool:
    return fragment.continuity is not None


def wiki_enabled(fragment: MemoryWiringFragment) -> bool:
    memory = fragment.memory
    return (
        memory_enabled(fragment)
        and memory is not None
        and memory.wiki is not None
        and memory.wiki.enabled is not False
    )
