"""A sample's session logs read back as what the graders look at.

Only host-sealed events are read (``runtime.sessions.log.read_events``). Per session: what the user
typed (synthetic messages excluded), the agent's replies, the lines of the memory blocks injected
into its prompt (recalled memory, handoff, plan tail: from ``context`` and ``context_refresh``),
its first action after the first user message (a tool call or, when it called none, its reply),
the tokens its turns used and how long each of its recalls took (``elapsedMs``, for the HTML
report's latency plot; no grader reads it).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from specwire.runtime.sessions.log import Event, read_events

MEMORY_BLOCK_KINDS = frozenset({"recalled_memory", "handoff", "continuity_tail"})


@dataclass(frozen=True)
class Said:
    session: int  # 1-based position of the session in the scenario
    turn: int
    text: str


@dataclass(frozen=True)
class Action:
    kind: str  # "tool_use" or "reply"
    text: str  # the reply, or "<tool name> <input as JSON>"
    # A plan tool's call names its step by number (and maybe its plan): kept to look it up.
    step: int | None = None
    plan_id: str | None = None


@dataclass(frozen=True)
class SessionTranscript:
    index: int
    session_id: str
    user: tuple[Said, ...]
    replies: tuple[Said, ...]
    memory_lines: tuple[str, ...]
    first_action: Action | None
    input_tokens: int = 0
    output_tokens: int = 0
    recall_ms: tuple[float, ...] = ()

    @property
    def tokens(self) -> int:
        return self.input_tokens + self.output_tokens


def read_transcripts(paths: Sequence[Path]) -> list[SessionTranscript]:
    """The transcripts of the logs at ``paths``, in scenario order (session 1 first)."""
    return [transcript(index, path.stem, read_events(path)) for index, path in enumerate(paths, 1)]


def transcript(index: int, session_id: str, events: Iterable[Event]) -> SessionTranscript:
    user: list[Said] = []
    replies: list[Said] = []
    lines: dict[str, None] = {}
    first: Action | None = None
    tokens_in = tokens_out = 0
    recall_ms: list[float] = []
    for event in events:
        payload = event.payload
        if event.type == "recall":
            elapsed = _elapsed(payload.get("elapsedMs"))
            if elapsed is not None:
                recall_ms.append(elapsed)
            continue
        if event.type in ("context", "context_refresh"):
            for line in _memory_lines(payload.get("blocks")):
                lines[line] = None
            continue
        if event.type == "tool_use" and user and first is None:
            first = _tool_action(payload.get("name"), payload.get("input"))
            continue
        text, turn = payload.get("text"), payload.get("turn")
        if not isinstance(text, str) or not isinstance(turn, int):
            continue
        if event.type == "user_message" and payload.get("synthetic") is not True:
            user.append(Said(index, turn, text))
        elif event.type == "assistant_message":
            replies.append(Said(index, turn, text))
            if user and first is None:
                first = Action("reply", text)
            usage = payload.get("usage")
            if isinstance(usage, dict):
                tokens_in += _count(usage.get("input"))
                tokens_out += _count(usage.get("output"))
    return SessionTranscript(
        index,
        session_id,
        tuple(user),
        tuple(replies),
        tuple(lines),
        first,
        tokens_in,
        tokens_out,
        tuple(recall_ms),
    )


def _tool_action(name: object, tool_input: object) -> Action:
    body = json.dumps(tool_input, ensure_ascii=False, sort_keys=True)
    step = plan_id = None
    if isinstance(tool_input, dict):
        number, plan = tool_input.get("step"), tool_input.get("planId")
        if isinstance(number, int) and not isinstance(number, bool):
            step = number
        plan_id = plan if isinstance(plan, str) else None
    return Action("tool_use", f"{name} {body}", step, plan_id)


def _memory_lines(blocks: object) -> list[str]:
    if not isinstance(blocks, list):
        return []
    found: list[str] = []
    for block in blocks:
        if isinstance(block, dict) and block.get("kind") in MEMORY_BLOCK_KINDS:
            text = block.get("text")
            if isinstance(text, str):
                found += [line.strip() for line in text.splitlines() if line.strip()]
    return found


def _count(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def _elapsed(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) and value >= 0 else None
