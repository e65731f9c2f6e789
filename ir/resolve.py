"""Validated source → IR: every default resolved, the target known, values converted."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any, Literal, assert_never

from specwire.ir.constants import (
    AUDIENCE_CONTINUITY_TARGETS,
    AUTO_MEMORY_SCOPE,
    SECRET_REF_RE,
    SESSION_ROUTED_TARGETS,
    TIER_TOOL_SPELLINGS,
)
from specwire.ir.durations import parse_duration_ms
from specwire.ir.learning import resolve_learning, with_learning_governance
from specwire.ir.model import (
    IrAgent,
    IrBudget,
    IrChannel,
    IrChannelSpec,
    IrCli,
    IrContinuity,
    IrCrew,
    IrManaged,
    IrMcpServer,
    IrMemory,
    IrMemoryDream,
    IrMemoryScope,
    IrMemoryWiki,
    IrResearch,
    IrRetrieve,
    IrRole,
    IrSpec,
    IrTenant,
    ModelRef,
    SecretRef,
    SettingValue,
)
from specwire.ir.source import (
    AgentSource,
    BashSource,
    ChannelSource,
    CliSource,
    ContinuitySource,
    CrewSource,
    DocumentBindingSource,
    DreamSource,
    ManagedSource,
    McpHttpServerSource,
    McpStdioServerSource,
    MemoryScopeSource,
    MemorySource,
    MemoryToolSource,
    ModelPriceSource,
    ProviderSource,
    ResearchSource,
    TenantSource,
    WikiSource,
)
from specwire.runtime.core.fragment import (
    ContinuityScope,
    DocumentBindingFragment,
    MemoryToolFragment,
    ModelPriceFragment,
    ProviderFragment,
    ScopeName,
)

AnySource = CliSource | ChannelSource | ManagedSource | ResearchSource | CrewSource


def _bash(source: BashSource | None) -> tuple[tuple[str, str | int], ...]:
    if source is None:
        return ()
    given = source.model_dump(by_alias=True, exclude_none=True)
    return tuple(sorted(given.items()))


def resolve(source: AnySource) -> IrSpec:
    learning = resolve_learning(source.learning, source.target)
    memory = resolve_memory(
        source.memory, source.target, tiers_listed=_lists_tier_tools(source.tools)
    )
    common: dict[str, Any] = {
        "name": source.name,
        "version": source.version,
        "tools": tuple(tool for tool in source.tools if tool not in TIER_TOOL_SPELLINGS),
        "bash": _bash(source.bash),
        "memory": with_learning_governance(memory, learning),
        "continuity": resolve_continuity(source.continuity, source.target),
        "learning": learning,
    }
    if isinstance(source, CliSource):
        return IrCli(agent=_agent(source.agent), **_servers(source, common))
    if isinstance(source, ChannelSource):
        return IrChannelSpec(
            agent=_agent(source.agent),
            channels=tuple(
                IrChannel(
                    name=name,
                    settings=tuple(
                        (key, _setting(value)) for key, value in sorted(settings.items())
                    ),
                )
                for name, settings in sorted(source.channels.items())
            ),
            session_key=source.routing.session_key,
            **_servers(source, common),
        )
    if isinstance(source, ManagedSource):
        return IrManaged(
            agent=_agent(source.agent),
            tenants=tuple(_tenant(tenant) for tenant in source.tenants),
            **_servers(source, common),
        )
    if isinstance(source, ResearchSource):
        retrieve = source.retrieve
        return IrResearch(
            agent=_agent(source.agent),
            goal=source.goal,
            branching_factor=source.branching_factor,
            max_duration_ms=source.max_duration_ms,
            retrieve=(
                IrRetrieve(allowed_origins=tuple(retrieve.allowed_origins))
                if retrieve is not None
                else None
            ),
            mcp_servers=_mcp_servers(source.mcp_servers),
            **common,
        )
    if isinstance(source, CrewSource):
        return IrCrew(
            model=_model(source.model),
            entry=source.entry,
            roles=tuple(
                IrRole(
                    name=name,
                    instructions=role.instructions,
                    model=_model(role.model) if role.model is not None else None,
                    model_pool=tuple(_model(model) for model in role.model_pool or ()),
                    model_fallbacks=tuple(_model(model) for model in role.model_fallbacks or ()),
                )
                for name, role in source.roles.items()
            ),
            mcp_servers=_mcp_servers(source.mcp_servers),
            **common,
        )
    assert_never(source)


def _servers(
    source: CliSource | ChannelSource | ManagedSource, common: dict[str, Any]
) -> dict[str, Any]:
    """``common`` with the spec's MCP servers and ``thredz`` (its server synthesized, memory on)
    for the targets that run tool servers."""
    servers = _mcp_servers(source.mcp_servers)
    if source.thredz is None:
        return {**common, "mcp_servers": servers}
    from specwire.ir.thredz_lowering import lower_thredz, thredz_memory, with_thredz_server

    continuity, memory = common["continuity"], common["memory"]
    assert continuity is None or isinstance(continuity, IrContinuity)
    assert memory is None or isinstance(memory, IrMemory)
    return {
        **common,
        "mcp_servers": with_thredz_server(servers, source.thredz),
        "thredz": lower_thredz(source.thredz, source.name, continuity),
        "memory": thredz_memory(memory, source.memory is not None),
    }


def _lists_tier_tools(tools: Iterable[str]) -> bool:
    return any(tool in TIER_TOOL_SPELLINGS for tool in tools)


def resolve_memory(
    memory: MemorySource | None, target: str, *, tiers_listed: bool = False
) -> IrMemory | None:
    """``None`` when memory is off; otherwise only the declared fields (``None`` = undeclared),
    and the memory scope resolved for ``target``."""
    if memory is None or memory.enabled is False:
        return None
    # ``providers`` names the primary first (``ir.checks`` refuses it beside the memory-level
    # connection keys): the primary becomes the fragment's backend, the rest its ``providers``.
    primary = memory.providers[0] if memory.providers else None
    return IrMemory(
        enabled=memory.enabled,
        # ``thredz`` is lowered into the fragment's ``thredz`` block, not a facts backend.
        backend=primary.backend
        if primary is not None
        else (None if memory.backend == "thredz" else memory.backend),
        dsn=primary.dsn if primary is not None else memory.dsn,
        url=primary.url if primary is not None else memory.url,
        token=primary.token if primary is not None else memory.token,
        embedder=memory.embedder,
        ttl_ms=parse_duration_ms(memory.ttl) if memory.ttl is not None else None,
        auto_capture=memory.auto_capture,
        auto_capture_threshold=memory.auto_capture_threshold,
        # `true` and "session-start" are the same mode; only "per-turn" is carried apart.
        auto_recall=None if memory.auto_recall is None else memory.auto_recall is not False,
        recall_k=memory.recall_k,
        wiki=_wiki(memory.wiki) if memory.wiki is not None else None,
        recall_mode="per-turn" if memory.auto_recall == "per-turn" else None,
        refresh_every=memory.refresh_every,
        session_recall=memory.session_recall,
        dream=_dream(memory.dream) if memory.dream is not None else None,
        scope=resolve_memory_scope(memory.scope, target),
        tiers=True if memory.tiers or tiers_listed else None,
        protocol=primary.protocol if primary is not None else memory.protocol,
        tools=tuple(_memory_tool(tool) for tool in memory.tools) if memory.tools else None,
        providers=tuple(_provider(p) for p in memory.providers[1:]) or None
        if memory.providers
        else None,
        documents=_documents(memory.documents) if memory.documents else None,
        state=_state(memory, primary.backend if primary is not None else memory.backend),
    )


def _state(memory: MemorySource, backend: str | None) -> Literal["postgres"] | None:
    """Every tier goes where the facts go on PostgreSQL unless the spec keeps them in files
    (``state: files``); ``ir.checks`` refuses ``state: postgres`` on any other backend."""
    if backend == "postgres" and memory.state != "files":
        return "postgres"
    return None


def _memory_tool(tool: MemoryToolSource) -> MemoryToolFragment:
    return MemoryToolFragment(
        name=tool.name,
        description=tool.description,
        access=tool.access,
        idempotent=tool.idempotent,
        input_schema=json.dumps(tool.input, sort_keys=True, separators=(",", ":")),
    )


def _provider(provider: ProviderSource) -> ProviderFragment:
    return ProviderFragment(
        name=provider.name,
        backend=provider.backend,
        dsn=provider.dsn,
        url=provider.url,
        token=provider.token,
        protocol=provider.protocol,
        path=provider.path,
        deadline_ms=parse_duration_ms(provider.deadline) if provider.deadline else None,
    )


def _documents(
    documents: dict[str, DocumentBindingSource],
) -> tuple[DocumentBindingFragment, ...]:
    return tuple(
        DocumentBindingFragment(
            name=name, scope=binding.scope, id=binding.id, access=binding.access
        )
        for name, binding in sorted(documents.items())
    )


def resolve_memory_scope(scope: MemoryScopeSource | None, target: str) -> IrMemoryScope | None:
    """``auto`` becomes the target's default (``AUTO_MEMORY_SCOPE``). ``None``: every fact is an
    ``agent`` fact, the behaviour before scopes (cli and research), so their fragments, and
    their bundles, stay as they were."""
    chosen = scope.default if scope is not None else "auto"
    default: ScopeName = AUTO_MEMORY_SCOPE[target] if chosen == "auto" else chosen
    follow_user = scope.follow_user if scope is not None else None
    if default == "agent" and follow_user is None and target in ("cli", "research"):
        return None
    return IrMemoryScope(default=default, follow_user=follow_user)


def _dream(dream: DreamSource) -> IrMemoryDream:
    every_ms = parse_duration_ms(dream.every)
    assert every_ms is not None  # the source model checked the duration
    return IrMemoryDream(
        every_ms=every_ms,
        mode=dream.mode,
        budget_usd=dream.budget_usd,
        instructions=dream.instructions,
        prices=_prices(dream.prices) if dream.prices is not None else None,
    )


def _prices(prices: dict[str, ModelPriceSource]) -> tuple[ModelPriceFragment, ...]:
    return tuple(
        ModelPriceFragment(
            model=model,
            input_usd_per_mtok=price.input,
            output_usd_per_mtok=price.output,
            cached_input_usd_per_mtok=price.cached_input,
        )
        for model, price in sorted(prices.items())
    )


def _wiki(wiki: WikiSource) -> IrMemoryWiki:
    return IrMemoryWiki(
        enabled=wiki.enabled,
        recall_k=wiki.recall_k,
        embedder=wiki.embedder,
        auto_recall=wiki.auto_recall,
        require_sources=wiki.require_sources,
    )


def resolve_continuity(continuity: ContinuitySource | None, target: str) -> IrContinuity | None:
    """On by default on every target; ``None`` when switched off. ``auto`` scope resolved."""
    block = continuity if continuity is not None else ContinuitySource()
    if block.enabled is False:
        return None
    chosen = block.scope if block.scope is not None else "auto"
    scope: ContinuityScope
    if chosen != "auto":
        scope = chosen
    elif target in AUDIENCE_CONTINUITY_TARGETS:
        scope = "audience"  # managed: the person's (the request's user, else its conversation)
    elif target in SESSION_ROUTED_TARGETS:
        scope = "session"
    else:
        scope = "spec"
    return IrContinuity(
        plan=block.plan if block.plan is not None else True,
        proof=block.proof if block.proof is not None else "ladder",
        ledger=block.ledger if block.ledger is not None else True,
        handoff=block.handoff if block.handoff is not None else True,
        scope=scope,
        focus_max_chars=block.focus_max_chars,
    )


def _agent(agent: AgentSource) -> IrAgent:
    return IrAgent(model=_model(agent.model), instructions=agent.instructions)


def _model(model: str) -> ModelRef:
    """A `$UPPER_SNAKE` model id is a secret reference, resolved by the host at run time."""
    if SECRET_REF_RE.fullmatch(model) is not None:
        return SecretRef(env=model[1:])
    return model


def _tenant(tenant: TenantSource) -> IrTenant:
    budget = tenant.budget
    return IrTenant(
        id=tenant.id,
        budget=(
            IrBudget(
                max_input_tokens=budget.max_input_tokens,
                max_output_tokens=budget.max_output_tokens,
            )
            if budget is not None
            else None
        ),
    )


def _mcp_servers(
    source: dict[str, McpStdioServerSource | McpHttpServerSource] | None,
) -> tuple[IrMcpServer, ...]:
    servers: list[IrMcpServer] = []
    for name, entry in sorted((source or {}).items()):
        optional = bool(entry.optional)
        if isinstance(entry, McpStdioServerSource):
            servers.append(
                IrMcpServer(
                    name=name,
                    transport="stdio",
                    command=entry.command,
                    args=tuple(entry.args or ()),
                    env=tuple(
                        (key, _setting(value)) for key, value in sorted((entry.env or {}).items())
                    ),
                    optional=optional,
                    sandbox=entry.sandbox is not False,
                    network=entry.network or "none",
                )
            )
        else:
            servers.append(
                IrMcpServer(
                    name=name,
                    transport="http",
                    url=entry.url,
                    headers=tuple(
                        (key, _setting(value))
                        for key, value in sorted((entry.headers or {}).items())
                    ),
                    optional=optional,
                )
            )
    return tuple(servers)


def _pairs(values: dict[str, str] | None) -> tuple[tuple[str, SettingValue], ...]:
    return tuple((key, _setting(value)) for key, value in sorted((values or {}).items()))


def _setting(value: str | int | float | bool) -> SettingValue:
    if isinstance(value, str) and SECRET_REF_RE.fullmatch(value) is not None:
        return SecretRef(env=value[1:])
    return value
