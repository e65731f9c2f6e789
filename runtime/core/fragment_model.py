"""The memory wiring fragment's pydantic models (the contract's shape; its vocabularies and
limits are in ``fragment``, which exposes these names too, loaded on first use).

Kept apart so that a bundle that wires no memory never imports pydantic: ``fragment`` is
imported by every bundle for its vocabularies, this module only by one that validates a
fragment (and by the compiler).
"""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from specwire.runtime.core.fragment import (
    DREAM_EVERY_MIN_MS,
    FRAGMENT_VERSION,
    RECALL_K_MAX,
    RECALL_K_MIN,
    ContinuityScope,
    DocumentAccess,
    DocumentScope,
    DreamModeName,
    ExamGrader,
    MemoryProtocol,
    MemoryToolAccess,
    ProofMode,
    ScopeName,
)


class _Frozen(BaseModel):
    # Built on first use (validation, a JSON schema): a memoryless bundle never builds them.
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)


class WikiFragment(_Frozen):
    enabled: bool | None = None
    recall_k: int | None = Field(default=None, ge=RECALL_K_MIN, le=RECALL_K_MAX)
    embedder: str | None = None
    auto_recall: bool | None = None
    require_sources: bool | None = None


class ModelPriceFragment(_Frozen):
    """One of ``memory.dream.prices``: a model's price in USD per million tokens, overriding
    the runtime's list-price table (``runtime.models.prices``)."""

    model: str
    input_usd_per_mtok: float = Field(ge=0)
    output_usd_per_mtok: float = Field(ge=0)
    cached_input_usd_per_mtok: float | None = Field(default=None, ge=0)


class DreamFragment(_Frozen):
    """``memory.dream``: ``every_ms`` is always declared (the window); the rest only if given."""

    every_ms: int = Field(ge=DREAM_EVERY_MIN_MS)
    mode: DreamModeName | None = None
    budget_usd: float | None = Field(default=None, ge=0)
    instructions: str | None = None
    # Version 6: price overrides for the model phase, sorted by model.
    prices: tuple[ModelPriceFragment, ...] | None = None


class ScopeFragment(_Frozen):
    """``memory.scope`` resolved for the target (``runtime.core.scopes``): where a write goes
    when the model names no scope (``user``: the person in their private conversations, the
    conversation in shared ones), and whether ``user`` facts follow a person into shared
    conversations. Absent: every fact is an ``agent`` fact (cli and research)."""

    default: ScopeName
    follow_user: bool | None = None


class MemoryToolFragment(_Frozen):
    """One provider-defined tool of an OpenComputer memory endpoint (``memory.tools``), exposed
    to the model as ``memory_<name>``."""

    name: str
    description: str
    access: MemoryToolAccess
    idempotent: bool | None = None
    # The tool's input JSON Schema as canonical JSON text (sorted keys, compact): a frozen,
    # byte-stable literal in the bundle.
    input_schema: str


class ProviderFragment(_Frozen):
    """A provider the router reads after the primary (``memory.providers`` beyond the first).
    Connection settings as in ``MemoryFactsFragment``; ``path`` is a vault or store folder,
    relative to the agent's folder."""

    name: str
    backend: str
    dsn: str | None = None
    url: str | None = None
    token: str | None = None
    protocol: MemoryProtocol | None = None
    path: str | None = None
    deadline_ms: int | None = Field(default=None, gt=0)


class DocumentBindingFragment(_Frozen):
    """``memory.documents.<name>``: a document (``id``) or the collection, read or read-write
    (``None``: read)."""

    name: str
    scope: DocumentScope
    id: str | None = None
    access: DocumentAccess | None = None


class MemoryFactsFragment(_Frozen):
    enabled: bool | None = None
    # A string, not a closed enum: the runtime names the backends it knows when it refuses one.
    backend: str | None = None
    # Connection settings as secret references (``$DATABASE_URL``), resolved at wiring time;
    # ``url`` may also be a literal URL. Never a secret value.
    dsn: str | None = None
    url: str | None = None
    token: str | None = None
    embedder: str | None = None
    ttl_ms: int | None = Field(default=None, gt=0)
    auto_capture: bool | None = None
    auto_capture_threshold: int | None = Field(default=None, gt=0)
    auto_recall: bool | None = None
    recall_k: int | None = Field(default=None, ge=RECALL_K_MIN, le=RECALL_K_MAX)
    wiki: WikiFragment | None = None
    # CrewHaus 0.4: carried only when declared (``recall_mode`` only for ``"per-turn"``).
    recall_mode: Literal["per-turn"] | None = None
    refresh_every: int | None = Field(default=None, gt=0)
    session_recall: bool | None = None
    dream: DreamFragment | None = None
    scope: ScopeFragment | None = None
    # Crewship's seven tiers as notes beside the facts (``runtime.facts.tiers``): their tools
    # and the prompt's memory blocks. Absent: off.
    tiers: bool | None = None
    # Version 5. ``protocol``: the http backend's wire (absent: ours). ``tools``: the OpenComputer
    # endpoint's tools. ``providers``: what the router reads beside the primary (the primary is
    # ``backend``/``dsn``/``url``/``token``/``protocol`` above). ``documents``: document memory
    # bindings, sorted by name.
    protocol: MemoryProtocol | None = None
    tools: tuple[MemoryToolFragment, ...] | None = None
    providers: tuple[ProviderFragment, ...] | None = None
    documents: tuple[DocumentBindingFragment, ...] | None = None
    # Version 6. ``"postgres"``: every tier but the facts' own (continuity, session logs, wiki,
    # usage, dream state, ...) lives in the facts' PostgreSQL database (``dsn``), so workers
    # share nothing but the database. Absent: those tiers are files in the state folder.
    state: Literal["postgres"] | None = None


class ThredzFragment(_Frozen):
    """``thredz``: facts and the wiki go through the MCP server named ``server`` (the Thredz
    tools); ``goals`` mirrors goal writes there; local continuity stays authoritative."""

    server: str
    visibility: Literal["private", "shared"] = "private"
    goals: bool = False
    agent_name: str | None = None


class ContinuityFragment(_Frozen):
    """Resolved continuity settings: every field but ``focus_max_chars`` is always present."""

    plan: bool = True
    proof: ProofMode = "ladder"
    ledger: bool = True
    handoff: bool = True
    scope: ContinuityScope = "spec"
    focus_max_chars: int | None = Field(default=None, gt=0)


class ExamFragment(_Frozen):
    """``learning.exam``: a JSONL dataset beneath the workspace and the graders a sample must
    all pass."""

    dataset: str
    graders: tuple[ExamGrader, ...]


class LearningFragment(_Frozen):
    """``learning`` (version 6): what the agent studies into its wiki and how it is examined.
    ``sources`` are paths beneath the workspace or http(s) URLs, in the spec's order;
    ``study_on_dream`` is resolved (CrewHaus: the study toggles default to true);
    ``study_on_heartbeat`` is true only when a channel or managed spec says so (absent
    otherwise: the host's heartbeat runs a study pass on each tick, ``runtime.hosts.heartbeat``)."""

    domain: str
    curriculum: str | None = None
    sources: tuple[str, ...] = ()
    exam: ExamFragment | None = None
    study_on_dream: bool = True
    study_on_heartbeat: bool | None = None


class MemoryWiringFragment(_Frozen):
    spec_name: str
    # The fragment's shape and the specwire that built it (absent in specwire 0.1 bundles).
    version: int = FRAGMENT_VERSION
    specwire: str | None = None
    memory: MemoryFactsFragment | None = None
    continuity: ContinuityFragment | None = None
    learning: LearningFragment | None = None
    # Version 6: absent unless the spec has ``thredz:``.
    thredz: ThredzFragment | None = None

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
