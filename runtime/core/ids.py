"""Identifier formats shared by the session log, the stores and the tools."""

from __future__ import annotations

import hashlib
import os

from specwire.runtime.core.patterns import LazyPattern

SESSION_ID_RE = LazyPattern(r"^sess_[0-9a-f]{16}$")
TOOL_USE_ID_RE = LazyPattern(r"^tu_[0-9a-zA-Z_]{1,64}$")
MEMORY_ID_RE = LazyPattern(r"^mem_[0-9a-f]{16}$")
# A conversation or session key a client names over HTTP (webhook conversation, managed
# X-Session-Id): no slash, no whitespace, no control character, no "..".
CLIENT_KEY_RE = LazyPattern(r"^(?!.*\.\.)[A-Za-z0-9][A-Za-z0-9._:@+=-]{0,199}$")
CLIENT_KEY_RULE = "1-200 letters, digits or ._:@+=- starting with a letter or digit, no '..'"
# A spec's name as a memory provider's scope key (spec names hold words, spaces, . : -).
SPEC_KEY_PATTERN = r"^[\w .:\-]{1,128}$"
SPEC_KEY_RE = LazyPattern(SPEC_KEY_PATTERN)


def check_client_key(value: str) -> str:
    if not CLIENT_KEY_RE.fullmatch(value):
        raise ValueError(f"must be {CLIENT_KEY_RULE}")
    return value


def random_hex(nbytes: int) -> str:
    """``nbytes`` random bytes from the OS, as lowercase hex: what ``secrets.token_hex`` returns
    (it is ``os.urandom(nbytes).hex()``), without importing ``secrets`` (and with it ``random``,
    ``base64`` and four extension modules) into every bundle's start."""
    return os.urandom(nbytes).hex()


def new_session_id() -> str:
    return f"sess_{random_hex(8)}"


def new_tool_use_id() -> str:
    return f"tu_{random_hex(8)}"


def new_memory_id() -> str:
    return f"mem_{random_hex(8)}"


def conversation_session_id(*parts: str) -> str:
    """A stable session id for a routed conversation (e.g. spec, channel key, thread key).

    Stable across restarts, so a channel thread or a tenant's session resumes its own session
    log and session-scoped continuity after the host restarts.
    """
    digest = hashlib.sha256("\x1f".join(parts).encode("utf-8")).hexdigest()
    return f"sess_{digest[:16]}"
