"""Identifier formats shared by the session log, the stores and the tools."""

from __future__ import annotations

import re
import secrets

SESSION_ID_RE = re.compile(r"^sess_[0-9a-f]{16}$")
TOOL_USE_ID_RE = re.compile(r"^tu_[0-9a-zA-Z_]{1,64}$")
MEMORY_ID_RE = re.compile(r"^mem_[0-9a-f]{16}$")
SPEC_NAME_RE = re.compile(r"^[\w .:-]+$")


def new_session_id() -> str:
    return f"sess_{secrets.token_hex(8)}"


def new_tool_use_id() -> str:
    return f"tu_{secrets.token_hex(8)}"


def new_memory_id() -> str:
    return f"mem_{secrets.token_hex(8)}"


def storage_name(spec_name: str) -> str:
    """A spec name made safe as one path component (names may hold spaces, dots and colons)."""
    safe = re.sub(r"[^A-Za-z0-9_.-]+", "-", spec_name).strip("-.")
    return safe or "spec"
