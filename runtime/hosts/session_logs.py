"""Where a console host (cli, crew, research) writes its sessions' logs: the database with
``memory.state: postgres``, else None (the callers' default: JSONL files under the agent's
folder). One place, so every session a host opens (the one the user talks to, a role delegated
to, a research branch) lands in the same backend."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from specwire.runtime.core.paths import StoreLayout
from specwire.runtime.sessions.store import SessionLogs
from specwire.runtime.wiring import parse_fragment, session_logs_for, state_in_database


def database_session_logs(
    memory: Mapping[str, Any] | None, spec_name: str, cwd: Path | None
) -> SessionLogs | None:
    """The spec's session logs in PostgreSQL when its fragment ``memory`` keeps state there;
    None otherwise (and for a bundle without memory)."""
    if memory is None:
        return None
    fragment = parse_fragment(memory)
    if not state_in_database(fragment):
        return None
    layout = StoreLayout.for_cwd((cwd or Path.cwd()).resolve(), spec_name)
    return session_logs_for(fragment, None, layout.sessions_dir)
