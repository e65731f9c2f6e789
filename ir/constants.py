"""Fixed vocabularies of the spec language.

What the runtime shares with the compiler (tool names, tenant ids, recall and TTL bounds, what
the runtime can wire) comes from the contract, ``runtime.core.fragment``, never a copy; what only
the
spec language knows (targets, session keys, name rules) is written here.
"""

from __future__ import annotations

import re
from typing import Final

from specwire.ir.model import TARGETS
from specwire.runtime.core.fragment import (
    BACKEND_CONNECTION_KEYS,
    BUILTIN_TOOL_NAMES,
    CREWSHIP_TIER_TOOLS,
    RECALL_K_MAX,
    RECALL_K_MIN,
    TENANT_ID_PATTERN,
    TIER_TOOL_NAMES,
    TTL_MAX_DAYS,
    UNFENCEABLE_TOOL_NAMES,
    WIRABLE_BACKENDS,
    ScopeName,
    embedder_problem,
    tenant_key_variable,
)

BUILTIN_TOOLS: Final = BUILTIN_TOOL_NAMES
UNFENCEABLE_TOOLS: Final = UNFENCEABLE_TOOL_NAMES
MANAGED_TOOLS: Final[tuple[str, ...]] = tuple(
    tool for tool in BUILTIN_TOOLS if tool not in UNFENCEABLE_TOOLS
)
# Crewship's memory tools a spec may list in ``tools:``, in its spelling (``memory.read``) or
# ours (``memory_read``): listing one asks for the tiers (``memory.tiers``), whose wiring
# registers all four; they are not builtin tools of the bundle.
TIER_TOOL_SPELLINGS: Final[dict[str, str]] = {
    **CREWSHIP_TIER_TOOLS,
    **{name: name for name in TIER_TOOL_NAMES},
}
# The spec's backends: the runtime's, and ``thredz`` (``ir.thredz_source``: lowered into the
# fragment's ``thredz`` block and an MCP server, not into ``memory.backend``).
KNOWN_BACKENDS: Final = (*WIRABLE_BACKENDS, "thredz")
SESSION_KEYS: Final[tuple[str, ...]] = ("thread", "channel", "user")

NAME_RE: Final = re.compile(r"[\w .:-]+", re.ASCII)
# Used with ``fullmatch``: the anchors of the shared pattern are dropped.
TENANT_ID_RE: Final = re.compile(TENANT_ID_PATTERN.removeprefix("^").removesuffix("$"))
SECRET_REF_RE: Final = re.compile(r"\$[A-Z][A-Z0-9_]*")
EMBEDDER_RE: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*/[A-Za-z0-9][A-Za-z0-9_.:/+-]*")

# Patterns are used with ``fullmatch`` (so a trailing newline never slips through).

# Targets whose host routes each conversation to its own session (so `scope: session` resolves).
SESSION_ROUTED_TARGETS: Final[frozenset[str]] = frozenset({"channel", "managed"})
# Targets whose ``continuity.scope: auto`` follows the person (fragment scope ``audience``):
# managed, whose requests name their ``user``; the channel's stays per conversation (``session``).
AUDIENCE_CONTINUITY_TARGETS: Final[frozenset[str]] = frozenset({"managed"})

# ``memory.scope`` per target: the scopes a spec may name (besides ``auto``), and what ``auto``
# means. A host must know the subject of a scope for its facts to be written there: cli and
# research talk to one owner (``agent``: everything is the agent's, as before scopes), channel and
# managed hosts know the person and the conversation, a crew knows its roles.
MEMORY_SCOPES_BY_TARGET: Final[dict[str, tuple[str, ...]]] = {
    "cli": ("agent",),
    "research": ("agent",),
    "channel": ("user", "conversation", "agent"),
    "managed": ("user", "conversation", "agent"),
    "crew": ("role", "crew", "agent"),
}
AUTO_MEMORY_SCOPE: Final[dict[str, ScopeName]] = {
    "cli": "agent",
    "research": "agent",
    "channel": "user",
    "managed": "user",
    "crew": "role",
}
# Targets where a person's ``user`` facts may follow them into shared conversations.
FOLLOW_USER_TARGETS: Final[frozenset[str]] = frozenset({"channel"})

# A crew role's lists of model ids (canonical keys): each item takes a model id or a secret ref.
ROLE_MODEL_LISTS: Final[tuple[str, ...]] = ("modelPool", "modelFallbacks")

BRANCHING_MIN: Final = 1
BRANCHING_MAX: Final = 16

__all__ = [
    "AUDIENCE_CONTINUITY_TARGETS",
    "BRANCHING_MAX",
    "BRANCHING_MIN",
    "AUTO_MEMORY_SCOPE",
    "BUILTIN_TOOLS",
    "EMBEDDER_RE",
    "embedder_problem",
    "KNOWN_BACKENDS",
    "BACKEND_CONNECTION_KEYS",
    "tenant_key_variable",
    "FOLLOW_USER_TARGETS",
    "MANAGED_TOOLS",
    "MEMORY_SCOPES_BY_TARGET",
    "NAME_RE",
    "RECALL_K_MAX",
    "RECALL_K_MIN",
    "ROLE_MODEL_LISTS",
    "SECRET_REF_RE",
    "SESSION_KEYS",
    "SESSION_ROUTED_TARGETS",
    "TARGETS",
    "TENANT_ID_RE",
    "TTL_MAX_DAYS",
    "UNFENCEABLE_TOOLS",
]
