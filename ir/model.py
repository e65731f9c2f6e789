"""The typed IR: a resolved spec, every default applied, the target known.

All models are frozen. ``None`` on an ``IrMemory`` field means the user did not declare it (the
runtime applies its default); ``IrContinuity`` is fully resolved except ``focus_max_chars``.
``IrMemory``, ``IrMemoryWiki`` and ``IrContinuity`` are the fragment's own types.
Collections are tuples in a deterministic order (declaration order unless noted).
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from specwire.runtime.core.fragment import (
    ContinuityFragment,
    DreamFragment,
    LearningFragment,
    MemoryFactsFragment,
    ScopeFragment,
    ThredzFragment,
    WikiFragment,
)

Target = Literal["cli", "channel", "managed", "research", "crew"]
TARGETS: tuple[Target, ...] = ("cli", "channel", "managed", "research", "crew")


class _Ir(BaseModel):
    # Built on first use: a build validates its spec's target's IR only, so the other targets'
    # validators are never built (as the source models, ``ir.source``).
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)


class SecretRef(_Ir):
    """A `$UPPER_SNAKE` value: resolved from the environment at run time, never baked in."""

    env: str


Scalar = str | int | float | bool
SettingValue = SecretRef | Scalar
# A model id as written, or a `$UPPER_SNAKE` reference to the environment variable holding it.
ModelRef = str | SecretRef


# The memory and continuity settings are the contract's own types: the fragment is what the IR
# lowers to, so the two shapes cannot drift.
IrMemoryWiki = WikiFragment
IrMemoryDream = DreamFragment
IrMemoryScope = ScopeFragment
IrMemory = MemoryFactsFragment
IrContinuity = ContinuityFragment
IrLearning = LearningFragment
IrThredz = ThredzFragment


class IrAgent(_Ir):
    model: ModelRef
    instructions: str


class _IrSpecBase(_Ir):
    name: str
    version: int | None = None
    tools: tuple[str, ...] = ()
    # The bash tool's sandbox settings the spec gave (canonical keys, sorted); empty: defaults.
    bash: tuple[tuple[str, str | int], ...] = ()
    # Absent when memory is off (no block, or `enabled: false`).
    memory: IrMemory | None = None
    # Absent when continuity is off (`continuity: false` or `enabled: false`).
    continuity: IrContinuity | None = None
    # Absent when the spec does not learn (no block, or `enabled: false`).
    learning: IrLearning | None = None


class IrMcpServer(_Ir):
    """One ``mcp_servers`` entry; ``env`` and ``headers`` sorted by key."""

    name: str
    transport: Literal["stdio", "http"]
    command: str | None = None
    args: tuple[str, ...] = ()
    env: tuple[tuple[str, SettingValue], ...] = ()
    url: str | None = None
    headers: tuple[tuple[str, SettingValue], ...] = ()
    optional: bool = False
    # stdio only: False where the spec says ``sandbox: false`` (the server runs unconfined).
    sandbox: bool = True
    network: Literal["none", "outbound"] = "none"


class IrCli(_IrSpecBase):
    target: Literal["cli"] = "cli"
    agent: IrAgent
    # Sorted by name; empty when the spec names none. With ``thredz``, holds its server.
    mcp_servers: tuple[IrMcpServer, ...] = ()
    thredz: IrThredz | None = None


class IrChannel(_Ir):
    """One chat channel (e.g. ``slack``) and its settings, sorted by key."""

    name: str
    settings: tuple[tuple[str, SettingValue], ...] = ()


class IrChannelSpec(_IrSpecBase):
    target: Literal["channel"] = "channel"
    agent: IrAgent
    channels: tuple[IrChannel, ...]  # sorted by channel name
    session_key: str
    # As on cli; started once per process and shared by every conversation.
    mcp_servers: tuple[IrMcpServer, ...] = ()
    thredz: IrThredz | None = None


class IrBudget(_Ir):
    max_input_tokens: int | None = None
    max_output_tokens: int | None = None


class IrTenant(_Ir):
    id: str
    budget: IrBudget | None = None


class IrManaged(_IrSpecBase):
    target: Literal["managed"] = "managed"
    agent: IrAgent
    tenants: tuple[IrTenant, ...]
    # As on cli; one instance of each per tenant, in the tenant's workspace.
    mcp_servers: tuple[IrMcpServer, ...] = ()
    thredz: IrThredz | None = None


class IrRetrieve(_Ir):
    allowed_origins: tuple[str, ...] = ()


class IrResearch(_IrSpecBase):
    target: Literal["research"] = "research"
    agent: IrAgent
    goal: str
    branching_factor: int
    max_duration_ms: int
    retrieve: IrRetrieve | None = None
    # As on cli; started once per run, offered to every branch and the synthesis.
    mcp_servers: tuple[IrMcpServer, ...] = ()
    # Located warnings for ``codegen build`` / ``check`` (a key accepted but not wired here:
    # ``thredz``); never emitted into the bundle.
    notes: tuple[str, ...] = ()


class IrRole(_Ir):
    name: str
    instructions: str
    model: ModelRef | None = None
    # Declared only: empty when the spec does not give them (never both `model` and a pool).
    model_pool: tuple[ModelRef, ...] = ()
    model_fallbacks: tuple[ModelRef, ...] = ()


class IrCrew(_IrSpecBase):
    target: Literal["crew"] = "crew"
    model: ModelRef
    entry: str
    roles: tuple[IrRole, ...]  # declaration order; `entry` names one of them
    # As on cli; started once per run, offered to every role.
    mcp_servers: tuple[IrMcpServer, ...] = ()
    # Located warnings for ``codegen build`` / ``check`` (a key accepted but not wired here:
    # ``thredz``); never emitted into the bundle.
    notes: tuple[str, ...] = ()


IrSpec = Annotated[
    IrCli | IrChannelSpec | IrManaged | IrResearch | IrCrew,
    Field(discriminator="target"),
]
