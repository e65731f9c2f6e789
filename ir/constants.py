"""Fixed vocabularies of the spec language (kept here: ``ir`` may not import the runtime)."""

from __future__ import annotations

import re
from typing import Final

from ir.model import TARGETS

BUILTIN_TOOLS: Final[tuple[str, ...]] = ("bash", "grep", "ls", "read", "write")
# Tools no tenant fence can confine (a shell reaches every path the process can): the managed
# target does not offer them.
UNFENCEABLE_TOOLS: Final[frozenset[str]] = frozenset({"bash"})
MANAGED_TOOLS: Final[tuple[str, ...]] = tuple(
    tool for tool in BUILTIN_TOOLS if tool not in UNFENCEABLE_TOOLS
)
KNOWN_BACKENDS: Final[tuple[str, ...]] = ("file",)
SESSION_KEYS: Final[tuple[str, ...]] = ("thread", "channel", "user")

NAME_RE: Final = re.compile(r"[\w .:-]+", re.ASCII)
TENANT_ID_RE: Final = re.compile(r"[a-zA-Z0-9][a-zA-Z0-9_\-]{0,63}")
SECRET_REF_RE: Final = re.compile(r"\$[A-Z][A-Z0-9_]*")
EMBEDDER_RE: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*/[A-Za-z0-9][A-Za-z0-9_.:/+-]*")

# Patterns are used with ``fullmatch`` (so a trailing newline never slips through).

# Targets whose host routes each conversation to its own session (so `scope: session` resolves).
SESSION_ROUTED_TARGETS: Final[frozenset[str]] = frozenset({"channel"})

RECALL_K_MIN: Final = 1
RECALL_K_MAX: Final = 50
BRANCHING_MIN: Final = 1
BRANCHING_MAX: Final = 16
# The longest fact TTL: the `Remember` tool's `ttlDays` cap (runtime/facts/tools.py
# MAX_TTL_DAYS; ir may not import it, a test keeps the two equal).
TTL_MAX_DAYS: Final = 3650

__all__ = [
    "BRANCHING_MAX",
    "BRANCHING_MIN",
    "BUILTIN_TOOLS",
    "EMBEDDER_RE",
    "KNOWN_BACKENDS",
    "MANAGED_TOOLS",
    "NAME_RE",
    "RECALL_K_MAX",
    "RECALL_K_MIN",
    "SECRET_REF_RE",
    "SESSION_KEYS",
    "SESSION_ROUTED_TARGETS",
    "TARGETS",
    "TENANT_ID_RE",
    "TTL_MAX_DAYS",
    "UNFENCEABLE_TOOLS",
]
