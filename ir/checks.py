"""Rules that span several keys: duplicates, cross-references, target-dependent settings.

They run on the normalized data (canonical keys, plain values) whether or not the source
models accepted it, so one run reports these problems alongside type errors. Each rule
ignores values of the wrong type: the source models report those.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from specwire.ir.constants import (
    AUTO_MEMORY_SCOPE,
    BACKEND_CONNECTION_KEYS,
    FOLLOW_USER_TARGETS,
    MEMORY_SCOPES_BY_TARGET,
    SESSION_ROUTED_TARGETS,
    TIER_TOOL_SPELLINGS,
    tenant_key_variable,
)
from specwire.ir.errors import SpecIssue
from specwire.ir.learning import check_learning
from specwire.ir.model_ids import UNLISTED_MODELS_KEY, model_id_problem
from specwire.ir.positions import Locator
from specwire.ir.provider_checks import check_providers
from specwire.ir.suggest import did_you_mean
from specwire.ir.thredz_source import thredz_checks
from specwire.ir.values import quote
from specwire.runtime.core.fragment import (
    DOCUMENT_BACKENDS,
    MAX_DOCUMENT_BINDINGS,
    MAX_MEMORY_TOOLS,
    MEMORY_TOOL_RESERVED_ARGUMENT,
    MEMORY_TOOL_SCHEMA_KEYWORDS,
)


def check(data: dict[str, Any], target: str, locator: Locator) -> list[SpecIssue]:
    issues: list[SpecIssue] = []
    issues += _duplicate_tools(data, locator)
    issues += _bash_options_need_bash(data, locator)
    issues += _session_scope(data, target, locator)
    issues += _backend_connection(data, locator)
    issues += _recall_cadence(data, locator)
    issues += _dream_backend(data, locator)
    issues += _state_backend(data, locator)
    issues += _memory_scope(data, target, locator)
    issues += _tier_tools_need_tiers(data, locator)
    issues += _documents(data, locator)
    issues += _opencomputer_protocol(data, locator)
    issues += _opencomputer_tools(data, locator)
    issues += check_providers(data, locator)
    issues += thredz_checks(data, target, locator)
    issues += _model_ids(data, locator)
    issues += check_learning(data, locator)
    if target == "managed":
        issues += _duplicate_tenants(data, locator)
        issues += _unconfined_servers_with_tenants(data, locator)
    if target == "crew":
        issues += _entry_names_a_role(data, locator)
        issues += _role_models(data, locator)
    return issues


def _unconfined_servers_with_tenants(data: dict[str, Any], locator: Locator) -> Iterable[SpecIssue]:
    """A managed spec's stdio servers run once per tenant, confined to its workspace; one run
    unconfined could read and write every tenant's root, so it needs a single tenant."""
    servers, tenants = data.get("mcpServers"), data.get("tenants")
    if not isinstance(servers, dict) or not isinstance(tenants, list) or len(tenants) < 2:
        return
    for name, server in servers.items():
        if isinstance(server, dict) and server.get("sandbox") is False:
            yield locator.at_value(
                ("mcpServers", name, "sandbox"),
                f"a server run unconfined could read and write every tenant's root, and this "
                f"spec has {len(tenants)} tenants: keep it in the sandbox (each tenant gets its "
                "own instance, confined to its workspace), or serve one tenant per spec",
            )


def _duplicate_tools(data: dict[str, Any], locator: Locator) -> Iterable[SpecIssue]:
    tools = data.get("tools")
    if not isinstance(tools, list):
        return
    seen: set[str] = set()
    for index, tool in enumerate(tools):
        if not isinstance(tool, str):
            continue
        if tool in seen:
            yield locator.at_value(("tools", index), f"duplicate tool {quote(tool)}")
        seen.add(tool)


def _tier_tools_need_tiers(data: dict[str, Any], locator: Locator) -> Iterable[SpecIssue]:
    """Crewship's memory tools in ``tools:`` turn the tiers on, so memory must be on and the
    tiers not switched off."""
    tools = data.get("tools")
    if not isinstance(tools, list):
        return
    memory = data.get("memory")
    for index, tool in enumerate(tools):
        if not isinstance(tool, str) or tool not in TIER_TOOL_SPELLINGS:
            continue
        if not isinstance(memory, dict) or memory.get("enabled") is False:
            yield locator.at_value(
                ("tools", index),
                f"{quote(tool)} is a memory tier tool: it needs a memory block "
                "(memory: {tiers: true})",
            )
        elif memory.get("tiers") is False:
            yield locator.at_value(
                ("tools", index),
                f"{quote(tool)} is a memory tier tool, but memory.tiers is false",
            )
        return


def _documents(data: dict[str, Any], locator: Locator) -> Iterable[SpecIssue]:
    """``memory.documents``: at most eight bindings, on the file or postgres backend, never with
    the tiers (both offer ``memory_read``); a ``document`` binding names its ``id``, a
    ``collection`` names none and is read-only."""
    memory = data.get("memory")
    if not isinstance(memory, dict) or not isinstance(memory.get("documents"), dict):
        return
    documents: dict[Any, Any] = memory["documents"]
    where = ("memory", "documents")
    backend = _primary_backend(memory)
    if backend not in DOCUMENT_BACKENDS:
        yield locator.at_key(
            where,
            f"document memory lives on the {' or '.join(DOCUMENT_BACKENDS)} backend, and this "
            f"spec's is {quote(backend)}: remove `documents` or change the backend",
        )
    tools = data.get("tools")
    listed = isinstance(tools, list) and any(
        isinstance(tool, str) and tool in TIER_TOOL_SPELLINGS for tool in tools
    )
    if memory.get("tiers") is True or (listed and memory.get("tiers") is not False):
        yield locator.at_key(
            where,
            "`documents` and the memory tiers cannot be combined: both give the model a "
            "`memory_read` tool; remove `documents`, or the tiers (`tiers`, and Crewship's "
            "memory tools in `tools`)",
        )
    if len(documents) > MAX_DOCUMENT_BINDINGS:
        yield locator.at_key(
            where,
            f"at most {MAX_DOCUMENT_BINDINGS} document bindings, and there are {len(documents)}",
        )
    for name, binding in documents.items():
        if not isinstance(binding, dict):
            continue
        if binding.get("scope") == "document" and "id" not in binding:
            yield locator.at_key(
                (*where, name),
                "a document binding names its document: add `id` (a collection binding, "
                "`scope: collection`, reads every document)",
            )
        if binding.get("scope") != "collection":
            continue
        if "id" in binding:
            yield locator.at_key(
                (*where, name, "id"),
                "a collection binding reads every document and takes no `id`: remove it, or "
                "use `scope: document`",
            )
        if binding.get("access") == "read-write":
            yield locator.at_value(
                (*where, name, "access"),
                "a collection is read-only (the model reads it with memory_read and "
                "memory_list): bind the document itself (`scope: document`, `id`) to let the "
                "model save it",
            )


def _primary_backend(memory: dict[str, Any]) -> str:
    """The backend writes go to: ``memory.backend``, else the first of ``memory.providers``,
    else the file store."""
    backend = memory.get("backend")
    providers = memory.get("providers")
    if backend is None and isinstance(providers, list) and providers:
        first = providers[0]
        backend = first.get("backend") if isinstance(first, dict) else None
    return backend if isinstance(backend, str) else "file"


def _bash_options_need_bash(data: dict[str, Any], locator: Locator) -> Iterable[SpecIssue]:
    tools = data.get("tools")
    if "bash" in data and not (isinstance(tools, list) and "bash" in tools):
        yield locator.at_key(
            ("bash",), 'sets the bash tool\'s sandbox, but "bash" is not in "tools"'
        )


def _session_scope(data: dict[str, Any], target: str, locator: Locator) -> Iterable[SpecIssue]:
    continuity = data.get("continuity")
    if not isinstance(continuity, dict) or continuity.get("scope") != "session":
        return
    if target in SESSION_ROUTED_TARGETS:
        return
    yield locator.at_value(
        ("continuity", "scope"),
        '"session" needs a target with per-conversation session routing (channel, managed) — '
        f"the {target} target has no session router, so a session-scoped store would never "
        'resolve a session id. Use scope "spec" or "auto".',
    )


def _backend_connection(data: dict[str, Any], locator: Locator) -> Iterable[SpecIssue]:
    """``memory.backend`` and its connection keys go together: postgres takes ``dsn``, http
    takes ``url`` and ``token``, file takes none."""
    memory = data.get("memory")
    if not isinstance(memory, dict):
        return
    backend = memory.get("backend", "file")
    if not isinstance(backend, str) or backend not in BACKEND_CONNECTION_KEYS:
        return
    wanted = BACKEND_CONNECTION_KEYS[backend]
    for key in sorted({key for keys in BACKEND_CONNECTION_KEYS.values() for key in keys}):
        if key in memory and key not in wanted:
            users = [name for name, keys in BACKEND_CONNECTION_KEYS.items() if key in keys]
            yield locator.at_key(
                ("memory", key),
                f"`{key}` is a setting of the {' and '.join(users)} backend, but the backend is "
                f"{quote(backend)}: remove `{key}` or set `backend: {users[0]}`",
            )
    missing = [key for key in wanted if key not in memory]
    if missing:
        where = ("memory", "backend") if "backend" in memory else ("memory",)
        example = {"dsn": "$DATABASE_URL", "url": "$MEMORY_URL", "token": "$MEMORY_TOKEN"}
        needs = ", ".join(f"`{key}: {example[key]}`" for key in missing)
        yield locator.at_value(where, f"the {backend} backend needs {needs}")


def _recall_cadence(data: dict[str, Any], locator: Locator) -> Iterable[SpecIssue]:
    """``memory.refreshEvery`` is the per-turn recall cadence: with recall off it says nothing."""
    memory = data.get("memory")
    if not isinstance(memory, dict) or "refreshEvery" not in memory:
        return
    if memory.get("autoRecall") is False:
        spelt = _last_key(locator, ("memory", "refreshEvery"))
        yield locator.at_key(
            ("memory", "refreshEvery"),
            f"`{spelt}` sets how often per-turn recall refreshes, but autoRecall is false: "
            'remove it, or set `autoRecall: "per-turn"`',
        )


# The fact backends the dream's fact steps run on (``runtime.wiring.dream_facts``).
DREAM_BACKENDS = ("file", "postgres")


def _dream_backend(data: dict[str, Any], locator: Locator) -> Iterable[SpecIssue]:
    """The dream engine consolidates the embedded fact store or the PostgreSQL facts (it lists,
    supersedes and sweeps them): an http memory service keeps facts it cannot administer."""
    memory = data.get("memory")
    if not isinstance(memory, dict) or not isinstance(memory.get("dream"), dict):
        return
    backend = _primary_backend(memory)
    if not isinstance(backend, str) or backend in DREAM_BACKENDS:
        return
    if backend not in BACKEND_CONNECTION_KEYS:
        return
    yield locator.at_key(
        ("memory", "dream"),
        f"the dream engine consolidates the embedded fact store or PostgreSQL, and the {backend} "
        "backend keeps facts elsewhere: remove `dream` or use `backend: file` or `postgres`",
    )


def _state_backend(data: dict[str, Any], locator: Locator) -> Iterable[SpecIssue]:
    """``state: postgres`` keeps every tier in the facts' database: only ``backend: postgres``
    has one."""
    memory = data.get("memory")
    if not isinstance(memory, dict) or memory.get("state") != "postgres":
        return
    backend = _primary_backend(memory)
    if backend == "postgres":
        return
    yield locator.at_value(
        ("memory", "state"),
        f"`state: postgres` keeps every tier in the facts' PostgreSQL database, and this spec's "
        f"backend is {quote(str(backend))}: set `backend: postgres` (with its `dsn`) or remove "
        "`state`",
    )


_SCOPE_WHY: dict[str, str] = {
    "user": "a person's memory needs a host that knows who is talking (channel, managed)",
    "conversation": "a conversation's memory needs a host that routes conversations "
    "(channel, managed)",
    "role": "role memory exists only in a crew",
    "crew": "crew memory exists only in a crew",
    "agent": "",
}


def _memory_scope(data: dict[str, Any], target: str, locator: Locator) -> Iterable[SpecIssue]:
    """``memory.scope`` names a scope the target's host can give a subject to; ``followUser``
    only where conversations are shared (channel)."""
    memory = data.get("memory")
    scope = memory.get("scope") if isinstance(memory, dict) else None
    if isinstance(scope, str):
        where: tuple[str, ...] = ("memory", "scope")
        default: Any = scope
        follow = None
    elif isinstance(scope, dict):
        where = ("memory", "scope", "default")
        default = scope.get("default")
        follow = scope.get("followUser")
    else:
        return
    allowed = MEMORY_SCOPES_BY_TARGET.get(target)
    if allowed is None:
        return
    named = isinstance(default, str) and default != "auto" and default in _SCOPE_WHY
    if named and default not in allowed:
        yield locator.at_value(
            where,
            f'scope "{default}" is not available on the {target} target: '
            f"{_SCOPE_WHY[default]} (the {target} target takes auto, which is "
            f"{AUTO_MEMORY_SCOPE[target]} there, or {' or '.join(allowed)})",
        )
    if follow is not None and target not in FOLLOW_USER_TARGETS:
        spelt = _last_key(locator, ("memory", "scope", "followUser"))
        yield locator.at_key(
            ("memory", "scope", "followUser"),
            f"`{spelt}` lets a person's facts follow them into shared conversations, which only "
            f"channel bots have: remove it on the {target} target",
        )


def _memory_protocol(memory: dict[str, Any]) -> Any:
    """The primary's wire: ``memory.protocol``, or the first of ``memory.providers``'."""
    providers = memory.get("providers")
    if isinstance(providers, list) and providers and isinstance(providers[0], dict):
        return providers[0].get("protocol", memory.get("protocol"))
    return memory.get("protocol")


# What the OpenComputer wire has no room for: its contract is recall and the endpoint's tools.
_NOT_ON_OPENCOMPUTER: dict[str, str] = {
    "tiers": "the tier notes are facts written through retain",
    "sessionRecall": "session records are facts written through retain",
    "autoCapture": "the contract has no turn-completion callback to capture from",
}


def _opencomputer_protocol(data: dict[str, Any], locator: Locator) -> Iterable[SpecIssue]:
    """``memory.protocol`` is the http backend's wire (each provider's, in ``memory.providers``,
    is checked with the provider: ``ir.provider_checks``), and the OpenComputer wire takes no
    setting that needs fact writes."""
    memory = data.get("memory")
    if not isinstance(memory, dict):
        return
    backend = memory.get("backend", "file")
    if "protocol" in memory and isinstance(backend, str) and backend != "http":
        yield locator.at_key(
            ("memory", "protocol"),
            f"`protocol` chooses the http backend's wire, but the backend is "
            f"{quote(backend)}: remove `protocol` or set `backend: http`",
        )
    if _memory_protocol(memory) != "opencomputer":
        return
    for key, why in _NOT_ON_OPENCOMPUTER.items():
        if key in memory and memory[key] not in (False, None):
            spelt = _last_key(locator, ("memory", key))
            yield locator.at_key(
                ("memory", key),
                f"`{spelt}` needs fact writes, and an OpenComputer memory endpoint takes none "
                f"({why}): remove it, or use `protocol: specwire`",
            )


def _opencomputer_tools(data: dict[str, Any], locator: Locator) -> Iterable[SpecIssue]:
    """``memory.tools`` are an OpenComputer endpoint's: at most eight, each name once, each
    input an object schema without ``$ref``, without the reserved ``memory`` argument, using
    only the keywords the runtime enforces."""
    memory = data.get("memory")
    if not isinstance(memory, dict) or not isinstance(memory.get("tools"), list):
        return
    tools: list[Any] = memory["tools"]
    if _memory_protocol(memory) != "opencomputer":
        yield locator.at_key(
            ("memory", "tools"),
            "`tools` are the tools of an OpenComputer memory endpoint: they need "
            "`backend: http` and `protocol: opencomputer`",
        )
        return
    if len(tools) > MAX_MEMORY_TOOLS:
        yield locator.at_value(
            ("memory", "tools", MAX_MEMORY_TOOLS),
            f"an OpenComputer memory endpoint declares at most {MAX_MEMORY_TOOLS} tools",
        )
    seen: set[str] = set()
    for index, tool in enumerate(tools):
        if not isinstance(tool, dict):
            continue
        name = tool.get("name")
        if isinstance(name, str):
            if name in seen:
                yield locator.at_value(
                    ("memory", "tools", index, "name"), f"duplicate memory tool {quote(name)}"
                )
            seen.add(name)
        schema = tool.get("input")
        if isinstance(schema, dict):
            yield from _tool_input(schema, ("memory", "tools", index, "input"), locator)


def _tool_input(
    schema: dict[str, Any], loc: tuple[Any, ...], locator: Locator
) -> Iterable[SpecIssue]:
    if schema.get("type") != "object":
        yield locator.at_value(
            loc, 'a memory tool\'s input must be a JSON Schema with type "object"'
        )
    properties = schema.get("properties")
    required = schema.get("required")
    reserved = MEMORY_TOOL_RESERVED_ARGUMENT
    if (isinstance(properties, dict) and reserved in properties) or (
        isinstance(required, list) and reserved in required
    ):
        where = (
            (*loc, "properties", reserved)
            if isinstance(properties, dict) and (reserved in properties)
            else (*loc, "required")
        )
        yield locator.at_key(
            where,
            f"`{reserved}` is reserved: the host adds it to name the memory resource, so a "
            "tool's input cannot declare it",
        )
    yield from _schema_keywords(schema, loc, locator, 0)


def _schema_keywords(
    schema: dict[str, Any], loc: tuple[Any, ...], locator: Locator, depth: int
) -> Iterable[SpecIssue]:
    """``$ref`` nowhere, and only the keywords the runtime checks arguments against."""
    if depth > 32:
        yield locator.at_value(loc, "a memory tool's input schema nests too deeply")
        return
    for key, value in schema.items():
        if key == "$ref":
            yield locator.at_key((*loc, key), "a memory tool's input cannot use $ref")
        elif key not in MEMORY_TOOL_SCHEMA_KEYWORDS:
            yield locator.at_key(
                (*loc, key),
                f"the JSON Schema keyword {quote(key)} is not enforced on memory tool "
                "arguments: remove it (the keywords allowed are listed in docs/opencomputer.md)",
            )
        elif key == "properties" and isinstance(value, dict):
            for name, sub in value.items():
                if isinstance(sub, dict):
                    yield from _schema_keywords(sub, (*loc, key, name), locator, depth + 1)
        elif key in ("items", "additionalProperties", "not") and isinstance(value, dict):
            yield from _schema_keywords(value, (*loc, key), locator, depth + 1)
        elif key in ("allOf", "anyOf", "oneOf") and isinstance(value, list):
            for index, sub in enumerate(value):
                if isinstance(sub, dict):
                    yield from _schema_keywords(sub, (*loc, key, index), locator, depth + 1)


def _duplicate_tenants(data: dict[str, Any], locator: Locator) -> Iterable[SpecIssue]:
    tenants = data.get("tenants")
    if not isinstance(tenants, list):
        return
    # Tenant directories must not collide on case-insensitive file systems either.
    seen: dict[str, tuple[int, str]] = {}
    # Nor may two tenants read their key (or memory token) from one environment variable.
    variables: dict[str, tuple[int, str]] = {}
    for index, tenant in enumerate(tenants):
        tenant_id = tenant.get("id") if isinstance(tenant, dict) else None
        if not isinstance(tenant_id, str):
            continue
        folded = tenant_id.casefold()
        if folded in seen:
            first_index, first_id = seen[folded]
            if first_id == tenant_id:
                message = (
                    f"duplicate tenant id {quote(tenant_id)} "
                    f"(already used by tenants[{first_index}])"
                )
            else:
                message = (
                    f"tenant id {quote(tenant_id)} clashes with tenants[{first_index}] "
                    f"{quote(first_id)}: tenant ids are compared case-insensitively"
                )
            yield locator.at_value(("tenants", index, "id"), message)
            continue
        seen[folded] = (index, tenant_id)
        variable = tenant_key_variable(tenant_id)
        if variable in variables:
            first_index, first_id = variables[variable]
            yield locator.at_value(
                ("tenants", index, "id"),
                f"tenant id {quote(tenant_id)} clashes with tenants[{first_index}] "
                f"{quote(first_id)}: both would read their key from {variable}",
            )
            continue
        variables[variable] = (index, tenant_id)


def _entry_names_a_role(data: dict[str, Any], locator: Locator) -> Iterable[SpecIssue]:
    entry = data.get("entry")
    roles = data.get("roles")
    if not isinstance(entry, str) or not isinstance(roles, dict) or not roles:
        return
    names = [name for name in roles if isinstance(name, str)]
    if entry in names:
        return
    hint = did_you_mean(entry, names) or f" (roles: {', '.join(names)})"
    yield locator.at_value(("entry",), f"no role named {quote(entry)}{hint}")


def _model_ids(data: dict[str, Any], locator: Locator) -> Iterable[SpecIssue]:
    """Every model id names a family the runtime runs, and (unless ``allowUnlistedModels``) an
    id this specwire lists (``ir.model_ids``)."""
    unlisted_ok = data.get(UNLISTED_MODELS_KEY) is True
    for loc, model_id in _model_id_values(data):
        problem = model_id_problem(model_id, unlisted_ok=unlisted_ok)
        if problem is not None:
            yield locator.at_value(loc, problem)


def _model_id_values(data: dict[str, Any]) -> Iterable[tuple[tuple[str | int, ...], str]]:
    agent = data.get("agent")
    if isinstance(agent, dict) and isinstance(agent.get("model"), str):
        yield ("agent", "model"), agent["model"]
    if isinstance(data.get("model"), str):
        yield ("model",), data["model"]
    roles = data.get("roles")
    if not isinstance(roles, dict):
        return
    for name, role in roles.items():
        if not isinstance(role, dict):
            continue
        if isinstance(role.get("model"), str):
            yield ("roles", name, "model"), role["model"]
        for key in ("modelPool", "modelFallbacks"):
            items = role.get(key)
            if isinstance(items, list):
                for index, item in enumerate(items):
                    if isinstance(item, str):
                        yield ("roles", name, key, index), item


def _role_models(data: dict[str, Any], locator: Locator) -> Iterable[SpecIssue]:
    """``modelPool`` / ``modelFallbacks``: no pool beside ``model``, no id twice in a list, no
    fallback that repeats a model it backs up (the pool, the role's model or the crew's)."""
    roles = data.get("roles")
    if not isinstance(roles, dict):
        return
    crew_model = data.get("model")
    for name, role in roles.items():
        if not isinstance(name, str) or not isinstance(role, dict):
            continue
        pool = role.get("modelPool")
        model = role.get("model")
        if pool is not None and model is not None:
            spelt = _last_key(locator, ("roles", name, "modelPool"))
            yield locator.at_key(
                ("roles", name, "modelPool"),
                f"use one of model / {spelt}: a role runs one model, or takes the pool's "
                "models in turn",
            )
        yield from _duplicate_ids(pool, ("roles", name, "modelPool"), locator)
        fallbacks = role.get("modelFallbacks")
        yield from _duplicate_ids(fallbacks, ("roles", name, "modelFallbacks"), locator)
        if not isinstance(fallbacks, list):
            continue
        backed: dict[str, str] = {}  # model id → where it is already used
        if isinstance(pool, list) and pool:
            for index, item in enumerate(pool):
                if isinstance(item, str):
                    where = locator.display(("roles", name, "modelPool", index))
                    backed.setdefault(item, f"in the role's pool ({where})")
        elif isinstance(model, str):
            backed[model] = "the role's model"
        elif model is None and isinstance(crew_model, str):
            backed[crew_model] = "the role's model (the crew's model)"
        for index, item in enumerate(fallbacks):
            if isinstance(item, str) and item in backed:
                yield locator.at_value(
                    ("roles", name, "modelFallbacks", index),
                    f"{quote(item)} is already {backed[item]}: a fallback must differ from "
                    "the models it backs up",
                )


def _duplicate_ids(items: Any, loc: tuple[str, str, str], locator: Locator) -> Iterable[SpecIssue]:
    if not isinstance(items, list):
        return
    seen: dict[str, int] = {}
    for index, item in enumerate(items):
        if not isinstance(item, str):
            continue
        if item in seen:
            first = locator.display((*loc, seen[item]))
            yield locator.at_value((*loc, index), f"duplicate model id {quote(item)} (see {first})")
            continue
        seen[item] = index


def _last_key(locator: Locator, loc: tuple[str, ...]) -> str:
    """A key as the user spelt it (``modelPool`` or ``model_pool``)."""
    return locator.display(loc).rsplit(".", 1)[-1]
