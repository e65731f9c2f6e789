"""Session logs: one JSONL file per session, one event per line.

Every line is ``{"seq": n, "type": <kind>, "at": <ISO-8601 UTC>, "payload": {...}}``.
The log is the evidence the proof ladder and auto-capture read, so its event kinds are a contract:

- ``session_start``  {spec, target, model, ...}  (hosts add conversation, tenant, sessionKey,
  branch, branches, role, entry where they apply)
- ``context``        {blocks: [{kind, text}]}       what was injected into the prompt at start
- ``context_refresh`` {blocks}                       the continuity tail changed mid-session
- ``recall``         {query, count, lines, error?}
- ``user_message``   {text, turn, synthetic?}     (synthetic: injected, not typed by a person)
- ``assistant_message`` {text, turn}
- ``tool_use``       {id, name, input}
- ``tool_result``    {toolUseId, name, isError, text}
- ``plan_update`` / ``goal_update`` / ``action_proof``  (emitted by continuity tools)
- ``context_evicted`` {role, text, turn}
- ``session_end``    {stopReason: complete|exit|abort, turns}
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from runtime.fsopen import open_regular, open_regular_fd

Clock = Callable[[], datetime]


def utc_now() -> datetime:
    return datetime.now(UTC)


def iso(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


@dataclass(frozen=True)
class Event:
    seq: int
    type: str
    at: str
    payload: dict[str, Any]


class SessionLog:
    """Append-only JSONL writer for one session. Each append is flushed and fsynced."""

    def __init__(self, sessions_dir: Path, session_id: str, now: Clock = utc_now) -> None:
        self.session_id = session_id
        self.path = sessions_dir / f"{session_id}.jsonl"
        self._now = now
        sessions_dir.mkdir(parents=True, exist_ok=True)
        self._seq = sum(1 for _ in read_events(self.path)) if self.path.exists() else 0
        # A torn last line (a crash mid-write) must not swallow the next event.
        self._mend_torn_tail = _ends_mid_line(self.path)

    def append(self, kind: str, payload: Mapping[str, Any]) -> Event:
        self._seq += 1
        event = Event(self._seq, kind, iso(self._now()), dict(payload))
        line = json.dumps(
            {"seq": event.seq, "type": event.type, "at": event.at, "payload": event.payload},
            ensure_ascii=False,
            sort_keys=True,
        )
        data = (line + "\n").encode("utf-8")
        if self._mend_torn_tail:
            data = b"\n" + data
            self._mend_torn_tail = False
        fd = open_regular_fd(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
        try:
            os.write(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)
        return event


def _ends_mid_line(path: Path) -> bool:
    try:
        with open_regular(path) as handle:
            size = handle.seek(0, os.SEEK_END)
            if size == 0:
                return False
            handle.seek(size - 1)
            return handle.read(1) != b"\n"
    except FileNotFoundError:
        return False


def read_events(path: Path) -> Iterator[Event]:
    """Yield the well-formed events of a log; a torn or foreign line is skipped, never half-read."""
    try:
        handle = open_regular(path)  # a FIFO here must not hang the agent
    except FileNotFoundError:
        return
    with handle:
        for raw_line in handle:
            event = _parse_line(raw_line)
            if event is not None:
                yield event


def _parse_line(raw_line: bytes) -> Event | None:
    try:
        raw = json.loads(raw_line.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        return None
    if not isinstance(raw, dict):
        return None
    kind, payload, seq, at = raw.get("type"), raw.get("payload"), raw.get("seq"), raw.get("at")
    if not isinstance(kind, str) or not isinstance(payload, dict):
        return None
    return Event(
        seq if isinstance(seq, int) and not isinstance(seq, bool) else 0,
        kind,
        at if isinstance(at, str) else "",
        payload,
    )


def session_log_path(sessions_dir: Path, session_id: str) -> Path:
    return sessions_dir / f"{session_id}.jsonl"


Verdict = Literal["verified", "missing", "error_result"]


@dataclass(frozen=True)
class ToolUseResolution:
    verdict: Verdict
    tool_name: str | None = None
    input: Any = None
    result_text: str | None = None


def resolve_tool_use(sessions_dir: Path, session_id: str, tool_use_id: str) -> ToolUseResolution:
    """Find a tool use and its result in a session log (and its child sessions, depth ≤ 8).

    ``verified`` needs both a ``tool_use`` with ``payload.id`` and a ``tool_result`` with
    ``payload.toolUseId`` whose ``isError`` is not true.
    """
    queue: list[tuple[str, int]] = [(session_id, 0)]
    seen: set[str] = set()
    while queue:
        current, depth = queue.pop(0)
        if current in seen:
            continue
        seen.add(current)
        use: Event | None = None
        result: Event | None = None
        for event in read_events(session_log_path(sessions_dir, current)):
            if event.type == "tool_use" and event.payload.get("id") == tool_use_id:
                use = event
            elif event.type == "tool_result" and event.payload.get("toolUseId") == tool_use_id:
                result = event
            elif event.type == "sub_agent_start" and depth < 8:
                child = event.payload.get("childSessionId")
                if isinstance(child, str):
                    queue.append((child, depth + 1))
        if use is not None and result is not None:
            name = use.payload.get("name")
            text = result.payload.get("text")
            return ToolUseResolution(
                "error_result" if result.payload.get("isError") is True else "verified",
                name if isinstance(name, str) else None,
                use.payload.get("input"),
                text if isinstance(text, str) else None,
            )
    return ToolUseResolution("missing")
