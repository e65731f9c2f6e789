"""Shared helpers for the continuity tests: a controllable clock, stores in tmp dirs, real logs."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from specwire.runtime.continuity.store import ContinuityStore
from specwire.runtime.core.fragment import ProofMode
from specwire.runtime.core.paths import StoreLayout
from specwire.runtime.core.tool_types import ToolContext
from specwire.runtime.sessions.log import SessionLog

SESSION = "sess_0123456789abcdef"
OTHER_SESSION = "sess_fedcba9876543210"
START = datetime(2026, 3, 1, 9, 30, 0, tzinfo=UTC)


@dataclass
class Clock:
    """A clock the test moves by hand."""

    moment: datetime = START

    def __call__(self) -> datetime:
        return self.moment

    def advance(self, seconds: float) -> None:
        self.moment += timedelta(seconds=seconds)


@dataclass
class Events:
    seen: list[tuple[str, dict[str, Any]]] = field(default_factory=list)

    def __call__(self, kind: str, payload: Mapping[str, Any]) -> None:
        self.seen.append((kind, dict(payload)))

    def of(self, kind: str) -> list[dict[str, Any]]:
        return [payload for k, payload in self.seen if k == kind]


@dataclass
class Logs:
    lines: list[str] = field(default_factory=list)

    def __call__(self, line: str) -> None:
        self.lines.append(line)


def layout_for(tmp_path: Path, spec: str = "demo") -> StoreLayout:
    return StoreLayout.for_cwd(tmp_path, spec)


def make_store(
    tmp_path: Path,
    *,
    proof_mode: ProofMode = "ladder",
    clock: Clock | None = None,
    log: Logs | None = None,
    **kwargs: Any,
) -> ContinuityStore:
    layout = layout_for(tmp_path)
    return ContinuityStore(
        layout,
        sessions_dir=layout.sessions_dir,
        proof_mode=proof_mode,
        now=clock or Clock(),
        log=log or Logs(),
        **kwargs,
    )


def record_tool_call(
    sessions_dir: Path,
    session_id: str,
    tool_use_id: str,
    *,
    name: str = "bash",
    input: Mapping[str, Any] | None = None,
    result: str = "ok",
    is_error: bool = False,
) -> None:
    """Append a real tool_use + tool_result pair to a session log."""
    log = SessionLog(sessions_dir, session_id, now=Clock())
    log.append("tool_use", {"id": tool_use_id, "name": name, "input": dict(input or {})})
    log.append(
        "tool_result",
        {"toolUseId": tool_use_id, "name": name, "isError": is_error, "text": result},
    )


def context(session_id: str = SESSION, events: Events | None = None) -> ToolContext:
    return ToolContext(session_id=session_id, tool_use_id="tu_current", emit=events or Events())
