"""Source models: the spec language as written (canonical camelCase keys), strictly validated.

Keys reach these models already normalized by ``ir.normalize`` (snake_case aliases mapped to
the camelCase spelling, unknown keys reported, ``memory:``/``continuity:``/``wiki:`` without a
value turned into ``{}``), so ``extra="forbid"`` is only a safety net here.
"""

from __future__ import annotations

from typing import Annotated, Any, Final, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator
from pydantic.alias_generators import to_camel

from specwire.ir.fields import (
    AutoRecall,
    Backend,
    BashCpuSeconds,
    BashFileSizeMb,
    BashMemoryMb,
    BashNetwork,
    BashProcesses,
    BranchingFactor,
    BudgetUsd,
    DreamEvery,
    DreamMode,
    DurationMs,
    Embedder,
    ManagedToolName,
    MemoryScope,
    MemoryToolName,
    ModelId,
    ModelIdList,
    Name,
    NonEmptyStr,
    NonNegativeInt,
    OneLineStr,
    Origin,
    PositiveInt,
    Proof,
    ProviderDeadline,
    RecallK,
    ResourceId,
    RoutedBackend,
    Scope,
    SecretRef,
    ServiceUrl,
    SessionKey,
    SettingValue,
    SpecName,
    TenantId,
    ToolName,
    Ttl,
    fail,
)
from specwire.ir.learning_source import (
    Domain,
    ExamGraders,
    LearningSources,
    WorkspaceFile,
)
from specwire.ir.mcp_source import (
    McpArgs,
    McpCommand,
    McpEnv,
    McpHeaders,
    McpNetwork,
    McpSandbox,
    McpServerName,
    McpUrl,
    unconfined_network,
)
from specwire.ir.price_source import PriceModelId
from specwire.ir.thredz_source import (
    ThredzAgents,
    ThredzApiKey,
    ThredzBaseUrl,
    thredz_shorthand,
)
from specwire.ir.values import got, quote
from specwire.runtime.core.fragment import (
    WIRABLE_TIERS,
    DocumentAccess,
    DocumentScope,
    MemoryProtocol,
    MemoryToolAccess,
)

MEMORY_SCOPES: tuple[str, ...] = get_args(MemoryScope)


def _block_flag(value: Any, key: str) -> Any:
    """``memory: false`` / ``wiki: true`` are not the spec language: say what is."""
    if value is False:
        fail(f'expected a mapping (got false): to switch {key} off, set "enabled: false" in it')
    if value is True:
        fail(
            f'expected a mapping (got true): to switch {key} on with defaults, write "{key}: {{}}"'
        )
    return value


class NullAsEmpty:
    """Marker (in ``Annotated`` metadata): a key given without a value means an empty block."""


NULL_AS_EMPTY = NullAsEmpty()


class _Source(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        strict=True,
        frozen=True,
        alias_generator=to_camel,
        populate_by_name=False,
        # Built on first use: a spec validates against its target's model only, so the other
        # targets' validators are never built (a spec model costs milliseconds to build).
        defer_build=True,
    )


class WikiSource(_Source):
    enabled: bool | None = None
    recall_k: RecallK | None = None
    embedder: Embedder | None = None
    auto_recall: bool | None = None
    require_sources: bool | None = None


class ModelPriceSource(_Source):
    """A model's price for the dream's budget, USD per million tokens."""

    input: BudgetUsd = Field(description="USD per million prompt tokens")
    output: BudgetUsd = Field(description="USD per million answer tokens")
    cached_input: BudgetUsd | None = Field(
        default=None, description="USD per million cached prompt tokens (default: input's)"
    )


class DreamSource(_Source):
    """``memory.dream`` (CrewHaus 0.4). ``budget_usd`` is spelt as CrewHaus spells it;
    ``budgetUsd`` is accepted too."""

    every: DreamEvery
    mode: DreamMode | None = None
    budget_usd: BudgetUsd | None = Field(default=None, alias="budget_usd")
    instructions: NonEmptyStr | None = None
    prices: dict[PriceModelId, ModelPriceSource] | None = Field(
        default=None,
        description="model prices (USD per million tokens) overriding the runtime's dated "
        "list-price table, keyed by model id or family (claude-sonnet-4-5, scripted)",
    )


class MemoryScopeSource(_Source):
    """``memory.scope`` in its block form; ``scope: user`` arrives as ``{default: user}``."""

    default: MemoryScope = Field(
        description="whose memory a fact is when the model names no scope: auto (the "
        "target's default: channel and managed user, crew role, cli and research agent), user, "
        "conversation, role, agent or crew",
    )
    follow_user: bool | None = Field(
        default=None,
        description="channel: a person's user facts are recalled in shared conversations too "
        "(default false: only in their direct messages)",
    )


class MemoryToolSource(_Source):
    """``memory.tools[]``: one tool of an OpenComputer memory endpoint (``memory_<name>``)."""

    name: MemoryToolName
    description: NonEmptyStr
    access: MemoryToolAccess
    idempotent: bool | None = None
    # A JSON Schema object (``type: object``, no ``$ref``, no top-level ``memory`` property).
    input: dict[str, Any]


class ProviderSource(_Source):
    """``memory.providers[]``: the primary first, then providers the router also reads."""

    name: ResourceId
    backend: RoutedBackend
    dsn: SecretRef | None = None
    url: ServiceUrl | None = None
    token: SecretRef | None = None
    protocol: MemoryProtocol | None = None
    # A markdown vault's folder (or another file store's), relative to the agent's folder.
    path: NonEmptyStr | None = None
    deadline: ProviderDeadline | None = None


class DocumentBindingSource(_Source):
    """``memory.documents.<name>``: one document (``id``) or the collection."""

    scope: DocumentScope
    id: ResourceId | None = None
    access: DocumentAccess | None = None


class MemorySource(_Source):
    enabled: bool | None = None
    backend: Backend | None = None
    # The backend's connection, as references (`ir.checks` pairs them with the backend).
    dsn: SecretRef | None = None
    url: ServiceUrl | None = None
    token: SecretRef | None = None
    embedder: Embedder | None = None
    ttl: Ttl | None = None
    auto_capture: bool | None = None
    auto_capture_threshold: PositiveInt | None = None
    auto_recall: AutoRecall | None = None
    refresh_every: PositiveInt | None = None
    session_recall: bool | None = None
    recall_k: RecallK | None = None
    wiki: Annotated[WikiSource | None, NULL_AS_EMPTY] = None
    dream: DreamSource | None = None
    scope: MemoryScopeSource | None = None
    tiers: bool | None = None
    protocol: MemoryProtocol | None = None
    tools: list[MemoryToolSource] | None = None
    providers: list[ProviderSource] | None = None
    documents: dict[ResourceId, DocumentBindingSource] | None = None
    # Where the tiers beside the facts live: ``postgres`` (the default with ``backend:
    # postgres``: every tier in that database) or ``files`` (the state folder).
    state: Literal["files", "postgres"] | None = None

    @field_validator("scope", mode="before")
    @classmethod
    def _scope_word(cls, value: Any) -> Any:
        if isinstance(value, str):
            if value not in MEMORY_SCOPES:
                fail(f"expected one of {', '.join(MEMORY_SCOPES)} or a mapping {got(value)}")
            return {"default": value}
        if not isinstance(value, dict):
            fail(f"expected one of {', '.join(MEMORY_SCOPES)} or a mapping {got(value)}")
        return value

    @field_validator("wiki", mode="before")
    @classmethod
    def _wiki_flag(cls, value: Any) -> Any:
        return _block_flag(value, "wiki")

    @field_validator("wiki", mode="after")
    @classmethod
    def _wiki_wirable(cls, value: WikiSource | None) -> WikiSource | None:
        if value is not None and value.enabled is not False and "wiki" not in WIRABLE_TIERS:
            fail(
                "the wiki tier cannot be wired by this specwire (it wires facts and continuity); "
                "remove `wiki` or set `enabled: false`"
            )
        return value


class ContinuitySource(_Source):
    """The block form; ``continuity: true|false`` arrives as ``{enabled: true|false}``."""

    enabled: bool | None = None
    plan: bool | None = None
    proof: Proof | None = None
    ledger: bool | None = None
    handoff: bool | None = None
    scope: Scope | None = None
    focus_max_chars: PositiveInt | None = None


class AgentSource(_Source):
    model: ModelId
    instructions: str


class RoutingSource(_Source):
    session_key: SessionKey


class BudgetSource(_Source):
    max_input_tokens: PositiveInt | None = None
    max_output_tokens: PositiveInt | None = None


class TenantSource(_Source):
    id: TenantId
    budget: BudgetSource | None = None


class RetrieveSource(_Source):
    allowed_origins: list[Origin] = Field(default_factory=list, max_length=64)


class RoleSource(_Source):
    # For editors: `model` and `modelPool` exclude each other (``ir.checks`` says so on load).
    model_config = ConfigDict(json_schema_extra={"not": {"required": ["model", "modelPool"]}})

    instructions: str
    model: ModelId | None = None
    model_pool: ModelIdList | None = Field(
        default=None,
        description="models the role's sessions take in turn (round-robin), instead of model",
    )
    model_fallbacks: ModelIdList | None = Field(
        default=None,
        description="models tried in order when the chosen model fails with a retryable error "
        "(rate limited, overloaded, a server error, a timeout)",
    )


class BashSource(_Source):
    """The ``bash`` tool's sandbox: its network and per-call limits (defaults when absent)."""

    network: BashNetwork | None = Field(
        default=None,
        description='"none" (default): the shell\'s own loopback only; "outbound": public TCP '
        "hosts through the host's checking proxy (HTTP_PROXY/HTTPS_PROXY), never this machine, "
        "its loopback or private networks",
    )
    memory_mb: BashMemoryMb | None = Field(default=None, description="address space (default 2048)")
    processes: BashProcesses | None = Field(default=None, description="processes (default 256)")
    file_size_mb: BashFileSizeMb | None = Field(
        default=None, description="largest file written (default 1024)"
    )
    cpu_seconds: BashCpuSeconds | None = Field(
        default=None, description="CPU time per process (default 600)"
    )


class ExamSource(_Source):
    """``learning.exam``: what ``run_exam`` (and ``/exam``) checks."""

    dataset: WorkspaceFile = Field(
        description='a JSONL file beneath the workspace: one {"question": ..., "answer": ...} '
        "object a line"
    )
    graders: ExamGraders = Field(
        description="what a sample must pass, each: contains (the answer appears in what the "
        "wiki recalls for the question) or covers (60% of the answer's words do)"
    )


class StudySource(_Source):
    """``learning.study``: when study passes run besides ``/study`` (both default to true)."""

    on_heartbeat: bool | None = Field(
        default=None,
        description="channel and managed: a study pass on each heartbeat tick of the serving "
        "host (every $SPECWIRE_HEARTBEAT_S seconds, default 1800); accepted and ignored on the "
        "other targets",
    )
    on_dream: bool | None = Field(
        default=None, description="a study pass after each dream run (needs memory.dream)"
    )


class LearningSource(_Source):
    """``learning`` (CrewHaus): the agent studies ``sources`` into its wiki and is examined."""

    enabled: bool | None = None
    domain: Domain = Field(description="what the agent learns about (one line)")
    curriculum: NonEmptyStr | None = None
    sources: LearningSources | None = Field(
        default=None,
        description="files beneath the workspace or http(s) URLs the study pass reads",
    )
    exam: ExamSource | None = None
    study: StudySource | None = None


class _SpecSource(_Source):
    name: SpecName
    version: NonNegativeInt | None = None
    allow_unlisted_models: bool | None = Field(
        default=None,
        description="accept model ids this specwire does not list (a model released after it); "
        "the id's family must still be one the runtime runs",
    )
    tools: list[ToolName] = Field(default_factory=list)
    bash: BashSource | None = None
    memory: Annotated[MemorySource | None, NULL_AS_EMPTY] = None
    continuity: Annotated[ContinuitySource | None, NULL_AS_EMPTY] = None
    learning: LearningSource | None = None

    @field_validator("learning", mode="before")
    @classmethod
    def _learning_flag(cls, value: Any) -> Any:
        if value is True or value is None:
            fail(
                f"expected a mapping {got(value)}: learning needs at least its domain, such as "
                '"learning: {domain: billing}"'
            )
        return _block_flag(value, "learning")

    # Every target declares ``mcp_servers`` and ``thredz`` (each with its own comment on what
    # it does there); their shorthands are read alike.
    @field_validator("thredz", mode="before", check_fields=False)
    @classmethod
    def _thredz_shorthand(cls, value: Any) -> Any:
        return thredz_shorthand(value)

    @field_validator("mcp_servers", mode="before", check_fields=False)
    @classmethod
    def _mcp_transports(cls, value: Any) -> Any:
        return _mcp_transports(value)

    @field_validator("memory", mode="before")
    @classmethod
    def _memory_flag(cls, value: Any) -> Any:
        return _block_flag(value, "memory")

    @field_validator("continuity", mode="before")
    @classmethod
    def _continuity_flag(cls, value: Any) -> Any:
        if isinstance(value, bool):
            return {"enabled": value}
        if not isinstance(value, dict):
            fail(f"expected true, false or a mapping {got(value)}")
        return value


class McpStdioServerSource(_Source):
    """An MCP server started as a process (its stdin and stdout carry the protocol)."""

    transport: Literal["stdio"]
    command: McpCommand
    args: McpArgs | None = None
    env: McpEnv | None = Field(
        default=None, description="the server's environment besides PATH (secrets as $REFs)"
    )
    optional: bool | None = Field(
        default=None, description="a server that does not start is one warning line, not a stop"
    )
    sandbox: McpSandbox | None = Field(
        default=None,
        description="false runs the server unconfined; by default it runs in the bash sandbox",
    )
    network: McpNetwork | None = Field(
        default=None,
        description="outbound: the confined server reaches public hosts (none by default)",
    )

    @field_validator("network")
    @classmethod
    def _network_needs_the_sandbox(cls, value: str | None, info: ValidationInfo) -> str | None:
        return unconfined_network(value, info.data.get("sandbox"))


class McpHttpServerSource(_Source):
    """An MCP server reached over streamable HTTP."""

    transport: Literal["http"]
    url: McpUrl
    headers: McpHeaders | None = Field(default=None, description="secrets as $REFs")
    optional: bool | None = Field(
        default=None, description="a server that does not start is one warning line, not a stop"
    )


McpServerSource = Annotated[
    McpStdioServerSource | McpHttpServerSource, Field(discriminator="transport")
]


class ThredzSource(_Source):
    """``thredz:`` (``ir.thredz_source``): the Thredz memory service through its MCP server."""

    api_key: ThredzApiKey = Field(description="the Thredz api key, as a $REF")
    base_url: ThredzBaseUrl | None = Field(default=None, description="the Thredz API's base URL")
    visibility: Literal["private", "shared"] | None = Field(
        default=None, description="what new knowledge is visible to (default private)"
    )
    goals: bool | None = Field(
        default=None, description="mirror goals to Thredz (default: on with continuity plans)"
    )
    agents: ThredzAgents | None = Field(
        default=None, description="the agent's handle, or true to derive it from the spec name"
    )


def _mcp_transports(value: Any) -> Any:
    if not isinstance(value, dict):
        return value
    for name, entry in value.items():
        transport = entry.get("transport") if isinstance(entry, dict) else None
        if transport not in ("stdio", "http"):
            fail(
                f'server {quote(str(name))} needs "transport": stdio (a command) or http '
                f"(a url) {got(transport)}"
            )
    return value


_MCP_SERVERS_DESCRIPTION: Final = (
    "MCP tool servers: their tools are offered as mcp__<server>__<tool>"
)
_THREDZ_DESCRIPTION: Final = "the Thredz memory service: true, an api key $REF, or a mapping"


class CliSource(_SpecSource):
    target: Literal["cli"]
    agent: AgentSource
    mcp_servers: dict[McpServerName, McpServerSource] | None = Field(
        default=None, description=_MCP_SERVERS_DESCRIPTION
    )
    thredz: ThredzSource | None = Field(default=None, description=_THREDZ_DESCRIPTION)


def _non_empty(value: Any, what: str) -> Any:
    if isinstance(value, dict | list) and not value:
        fail(f"must list at least one {what}")
    return value


class ChannelSource(_SpecSource):
    target: Literal["channel"]
    agent: AgentSource
    channels: dict[Name, dict[OneLineStr, SettingValue]] = Field(min_length=1)
    routing: RoutingSource
    # Started once per process, shared by every conversation (``runtime.hosts.tool_servers``).
    mcp_servers: dict[McpServerName, McpServerSource] | None = Field(
        default=None, description=_MCP_SERVERS_DESCRIPTION
    )
    thredz: ThredzSource | None = Field(default=None, description=_THREDZ_DESCRIPTION)

    @field_validator("channels", mode="before")
    @classmethod
    def _some_channel(cls, value: Any) -> Any:
        return _non_empty(value, "channel")


class ManagedSource(_SpecSource):
    target: Literal["managed"]
    agent: AgentSource
    tenants: list[TenantSource] = Field(min_length=1)
    # No unfenceable tool (bash): every tool must stay inside the tenant's root.
    tools: list[ManagedToolName] = Field(default_factory=list)
    # One instance of each server per tenant, working in that tenant's workspace
    # (``runtime.hosts.tool_servers``).
    mcp_servers: dict[McpServerName, McpServerSource] | None = Field(
        default=None, description=_MCP_SERVERS_DESCRIPTION
    )
    thredz: ThredzSource | None = Field(default=None, description=_THREDZ_DESCRIPTION)

    @field_validator("tenants", mode="before")
    @classmethod
    def _some_tenant(cls, value: Any) -> Any:
        return _non_empty(value, "tenant")


class ResearchSource(_SpecSource):
    target: Literal["research"]
    agent: AgentSource
    goal: NonEmptyStr
    branching_factor: BranchingFactor
    max_duration_ms: DurationMs
    retrieve: RetrieveSource | None = None
    # Started once per run, offered to every branch (``runtime.hosts.tool_servers``).
    mcp_servers: dict[McpServerName, McpServerSource] | None = Field(
        default=None, description=_MCP_SERVERS_DESCRIPTION
    )
    # Accepted (CrewHaus carries it on this shape) but not wired: a located warning, memory
    # stays local and Thredz's server is not started (``ir.thredz_source.unwired_thredz``).
    thredz: ThredzSource | None = Field(default=None, description=_THREDZ_DESCRIPTION)


class CrewSource(_SpecSource):
    target: Literal["crew"]
    model: ModelId
    entry: NonEmptyStr
    roles: dict[Name, RoleSource] = Field(min_length=1)
    # Started once per run, offered to every role (``runtime.hosts.tool_servers``).
    mcp_servers: dict[McpServerName, McpServerSource] | None = Field(
        default=None, description=_MCP_SERVERS_DESCRIPTION
    )
    # Accepted (CrewHaus carries it on this shape) but not wired: a located warning, memory
    # stays local and Thredz's server is not started (``ir.thredz_source.unwired_thredz``).
    thredz: ThredzSource | None = Field(default=None, description=_THREDZ_DESCRIPTION)

    @field_validator("roles", mode="before")
    @classmethod
    def _some_role(cls, value: Any) -> Any:
        return _non_empty(value, "role")


SpecSource = Annotated[
    CliSource | ChannelSource | ManagedSource | ResearchSource | CrewSource,
    Field(discriminator="target"),
]

SOURCE_MODELS: dict[str, type[_SpecSource]] = {
    "cli": CliSource,
    "channel": ChannelSource,
    "managed": ManagedSource,
    "research": ResearchSource,
    "crew": CrewSource,
}
