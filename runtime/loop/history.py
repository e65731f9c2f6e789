"""Earlier turns of a conversation, read back from its session log.

Per-turn hosts (channel, managed) run one single-turn loop per message; seeding the loop with
the conversation so far keeps the thread coherent. Each answered turn is replayed faithfully:
the user message, then its tool rounds (an assistant message carrying the tool calls, from the
``tool_use`` events, followed by their results, from the ``tool_result`` events), then the final
assistant message. The tool-use ids therefore reach the model in a later message, so a step can be
proven with a call made in an earlier one.

What the log cannot say is replayed as closely as it can:

- The log does not mark round boundaries and the loop logs each call's use and result before the
  next call, so a round ends at the first ``tool_use`` that follows a ``tool_result``: calls made
  together in one round replay as consecutive one-call rounds. The text the model wrote alongside
  its calls is not logged; the replayed call messages have empty text.
- A call with no logged result (a torn log) is answered with an error result saying so, since
  every tool call must be answered; a result with no call in its round is dropped.
- A result text longer than ``max_result_chars`` is cut, with a note; the full text stays in the
  log, where the proof ladder reads it.

Turns the loop already evicted from the context window (``context_evicted``) are not replayed,
so they are not evicted and pinned in the ledger a second time; turn numbers carry on from the
last logged turn. Turns that were never answered (no ``assistant_message``) are not replayed.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from specwire.runtime.models.types import (
    AssistantMessage,
    Message,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from specwire.runtime.sessions.log import Event, read_events

DEFAULT_HISTORY_TURNS = 50
# A replayed tool result is cut to this many characters (a file dump, a long listing…).
DEFAULT_MAX_RESULT_CHARS = 16_000
NO_RESULT_TEXT = "[no result was logged for this call]"


def cut_note(omitted: int) -> str:
    return f"\n[… {omitted} more character(s) not replayed; the full result is in the session log]"


@dataclass(frozen=True)
class ToolRound:
    """One replayed tool round: the assistant message with its calls, then one result per call."""

    calls: AssistantMessage
    results: tuple[ToolResultMessage, ...]

    def messages(self) -> list[Message]:
        return [self.calls, *self.results]


@dataclass(frozen=True)
class HistoryTurn:
    """One completed turn as a resumed session replays it."""

    turn: int
    user: UserMessage  # what the model saw (for a slash command, the expanded message)
    assistant: AssistantMessage  # the final answer
    typed: str = ""  # what the person typed (for a slash command, the command line)
    rounds: tuple[ToolRound, ...] = ()

    def messages(self) -> list[Message]:
        """The turn as the model saw it: user, each tool round's call and results, answer."""
        return [self.user, *(m for r in self.rounds for m in r.messages()), self.assistant]


@dataclass(frozen=True)
class ConversationHistory:
    """The turns a session log holds, in order."""

    turns: list[HistoryTurn] = field(default_factory=list)
    # The highest turn number logged so far; the next turn is ``last_turn + 1``.
    last_turn: int = 0


@dataclass
class _OpenRound:
    """A tool round being read back from a log: its calls and the results so far."""

    calls: list[ToolCall] = field(default_factory=list)
    results: dict[str, ToolResultMessage] = field(default_factory=dict)

    def close(self) -> ToolRound:
        answered = tuple(
            self.results.get(call.id) or ToolResultMessage(call.id, call.name, NO_RESULT_TEXT, True)
            for call in self.calls
        )
        return ToolRound(AssistantMessage("", tuple(self.calls)), answered)


@dataclass
class _OpenTurn:
    """A turn being read back from a log, until its answer is found."""

    turn: int
    user: UserMessage
    typed: str
    rounds: list[_OpenRound] = field(default_factory=list)

    def add_call(self, payload: Mapping[str, Any]) -> None:
        call_id, name, tool_input = payload.get("id"), payload.get("name"), payload.get("input")
        if not isinstance(call_id, str) or not isinstance(name, str):
            return
        if not isinstance(tool_input, dict):
            return
        if not self.rounds or self.rounds[-1].results:
            self.rounds.append(_OpenRound())
        self.rounds[-1].calls.append(ToolCall(call_id, name, tool_input))

    def add_result(self, payload: Mapping[str, Any], max_chars: int) -> None:
        if not self.rounds:
            return
        current = self.rounds[-1]
        call = next((c for c in current.calls if c.id == payload.get("toolUseId")), None)
        if call is None or call.id in current.results:
            return
        text = payload.get("text")
        text = text if isinstance(text, str) else ""
        if len(text) > max_chars:
            text = text[:max_chars] + cut_note(len(text) - max_chars)
        is_error = payload.get("isError") is True
        current.results[call.id] = ToolResultMessage(call.id, call.name, text, is_error)

    def answered(self, reply: str) -> HistoryTurn:
        rounds = tuple(r.close() for r in self.rounds)
        return HistoryTurn(self.turn, self.user, AssistantMessage(reply), self.typed, rounds)


def history_from_log(
    log: Path | Iterable[Event],
    max_turns: int = DEFAULT_HISTORY_TURNS,
    max_result_chars: int = DEFAULT_MAX_RESULT_CHARS,
) -> ConversationHistory:
    """The last ``max_turns`` answered turns of a session log that are still in context.

    ``log`` is a log file's path or the log's events (``SessionRecorder.events()``, either
    backend). For an expanded slash command the synthetic message (what the model saw) is
    replayed.
    """
    if max_result_chars < 0:
        raise ValueError("max_result_chars must be >= 0")
    answered: list[HistoryTurn] = []
    evicted: set[int] = set()
    pending: _OpenTurn | None = None
    last_turn = 0
    for event in read_events(log) if isinstance(log, Path) else log:
        if event.type == "tool_use":
            if pending is not None:
                pending.add_call(event.payload)
            continue
        if event.type == "tool_result":
            if pending is not None:
                pending.add_result(event.payload, max_result_chars)
            continue
        text, turn = event.payload.get("text"), event.payload.get("turn")
        if not isinstance(text, str) or not isinstance(turn, int):
            continue
        if event.type == "user_message":
            last_turn = max(last_turn, turn)
            synthetic = event.payload.get("synthetic") is True
            same = synthetic and pending is not None and pending.turn == turn
            typed = pending.typed if same and pending is not None else text
            pending = _OpenTurn(turn, UserMessage(text, synthetic=synthetic), typed)
        elif event.type == "assistant_message" and pending is not None and pending.turn == turn:
            answered.append(pending.answered(text))
            pending = None
        elif event.type == "context_evicted":
            evicted.add(turn)
    kept = [entry for entry in answered if entry.turn not in evicted]
    return ConversationHistory(kept[-max_turns:] if max_turns > 0 else [], last_turn)
