"""Deterministic, threshold-gated auto-capture of durable facts from a session log (no model).

A turn starts at each non-synthetic ``user_message``; synthetic user messages and tool results
stay inside the turn they belong to. Each turn yields at most one candidate: the first non-empty
line of the turn's final ``assistant_message``, whitespace collapsed, cut to 240 characters.
Candidates are deduplicated case-insensitively and capped at 8. A candidate's evidence is the
tool-use ids of the turn's ``tool_result`` events whose ``isError`` is not true.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from runtime.events import Event, read_events, session_log_path
from runtime.facts.model import InvalidRequestError, Provenance
from runtime.facts.store import FactStore
from runtime.facts.text import clip, collapse_whitespace, normalize_text

MAX_FACT_CHARS = 240
MAX_FACTS = 8
AUTO_CAPTURE_TAG = "auto-capture"


@dataclass(frozen=True)
class DurableFact:
    text: str
    evidence: tuple[str, ...] = ()


@dataclass
class Turn:
    final_answer: str | None = None
    evidence: list[str] = field(default_factory=list)


def split_turns(events: Iterable[Event]) -> list[Turn]:
    """Group events into turns; events before the first real user message belong to none."""
    turns: list[Turn] = []
    for event in events:
        payload = event.payload
        if event.type == "user_message" and payload.get("synthetic") is not True:
            turns.append(Turn())
        elif not turns:
            continue
        elif event.type == "assistant_message":
            text = payload.get("text")
            turns[-1].final_answer = text if isinstance(text, str) else None
        elif event.type == "tool_result" and payload.get("isError") is not True:
            tool_use_id = payload.get("toolUseId")
            evidence = turns[-1].evidence
            if isinstance(tool_use_id, str) and tool_use_id and tool_use_id not in evidence:
                evidence.append(tool_use_id)
    return turns


def first_line(text: str) -> str | None:
    for line in text.splitlines():
        collapsed = collapse_whitespace(line)
        if collapsed:
            return collapsed
    return None


def durable_facts(
    events: Iterable[Event], *, max_len: int = MAX_FACT_CHARS, max_facts: int = MAX_FACTS
) -> list[DurableFact]:
    facts: list[DurableFact] = []
    seen: set[str] = set()
    for turn in split_turns(events):
        if len(facts) == max_facts:
            break
        line = first_line(turn.final_answer) if turn.final_answer else None
        if line is None:
            continue
        text = clip(line, max_len)
        key = normalize_text(text)
        if key in seen:
            continue
        seen.add(key)
        facts.append(DurableFact(text, tuple(turn.evidence)))
    return facts


def capture_session(
    store: FactStore,
    sessions_dir: Path,
    session_id: str,
    *,
    ttl_ms: int | None,
    threshold: int,
    completed_turns: int,
) -> int:
    """Capture a session's durable facts into ``store``; returns how many were written.

    Nothing happens below the threshold (``completed_turns < max(1, threshold)``). Facts whose
    normalized text is already live are skipped, so capturing a session twice writes nothing.
    """
    if completed_turns < max(1, threshold):
        return 0
    _check_session_id(session_id)
    facts = durable_facts(read_events(session_log_path(sessions_dir, session_id)))
    written = 0
    for fact in facts:
        _, created = store.remember_if_new(
            fact.text,
            (AUTO_CAPTURE_TAG, session_id),
            ttl_ms=ttl_ms,
            provenance=Provenance(session_id, fact.evidence),
        )
        written += created
    return written


def _check_session_id(session_id: str) -> None:
    """The id names a file in ``sessions_dir``: it must be one plain path component."""
    if (
        not session_id
        or session_id in (".", "..")
        or "/" in session_id
        or "\\" in session_id
        or "\x00" in session_id
    ):
        raise InvalidRequestError(f"not a session id: {session_id!r}")
