"""Rules that span several keys: duplicates, cross-references, target-dependent settings.

They run on the normalized data (canonical keys, plain values) whether or not the source
models accepted it, so one run reports these problems alongside type errors. Each rule
ignores values of the wrong type: the source models report those.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ir.constants import SESSION_ROUTED_TARGETS
from ir.errors import SpecIssue
from ir.positions import Locator
from ir.suggest import did_you_mean
from ir.values import quote


def check(data: dict[str, Any], target: str, locator: Locator) -> list[SpecIssue]:
    issues: list[SpecIssue] = []
    issues += _duplicate_tools(data, locator)
    issues += _session_scope(data, target, locator)
    if target == "managed":
        issues += _duplicate_tenants(data, locator)
    if target == "crew":
        issues += _entry_names_a_role(data, locator)
    return issues


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


def _session_scope(data: dict[str, Any], target: str, locator: Locator) -> Iterable[SpecIssue]:
    continuity = data.get("continuity")
    if not isinstance(continuity, dict) or continuity.get("scope") != "session":
        return
    if target in SESSION_ROUTED_TARGETS:
        return
    yield locator.at_value(
        ("continuity", "scope"),
        '"session" needs a target with per-conversation session routing (channel) — '
        f"the {target} target has no session router, so a session-scoped store would never "
        'resolve a session id. Use scope "spec" or "auto".',
    )


def _duplicate_tenants(data: dict[str, Any], locator: Locator) -> Iterable[SpecIssue]:
    tenants = data.get("tenants")
    if not isinstance(tenants, list):
        return
    # Tenant directories must not collide on case-insensitive file systems either.
    seen: dict[str, tuple[int, str]] = {}
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
