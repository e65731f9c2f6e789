"""Earlier turns of a conversation, read back from its session log.

Per-turn hosts (channel, managed) run one single-turn loop per message; seeding the loop with
the conversation so far keeps the thread coherent. Only user and final assistant messages are
replayed (tool calls stay in the log, where the proof ladder reads them). Turns the loop already
evicted from the context window (``context_evicted``) are not replayed, so they are not evicted
and pinned in the ledger a second time; turn numbers carry on from the last logged turn.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from runtime.events import read_events
from runtime.models.types import AssistantMessage, UserMessage

DEFAULT_HISTORY_TURNS = 50


@dataclass(frozen=True)
class HistoryTurn:
    turn: int
    user: UserMessage  # what the model saw (for a slash command, the expanded message)
    assistant: AssistantMessage
    typed: str = ""  # what the person typed (for a slash command, the command line)


@dataclass(frozen=True)
class ConversationHistory:
    turns: list[HistoryTurn] = field(default_factory=list)
    # The highest turn number logged so far; the next turn is ``last_turn + 1``.
    last_turn: int = 0


def history_from_log(path: Path, max_turns: int = DEFAULT_HISTORY_TURNS) -> ConversationHistory:
    """The last ``max_turns`` answered turns of a session log that are still in context.

    For an expanded slash command the synthetic message (what the model saw) is replayed.
    """
    answered: list[HistoryTurn] = []
    evicted: set[int] = set()
    pending: tuple[int, UserMessage, str] | None = None
    last_turn = 0
    for event in read_events(path):
        text, turn = event.payload.get("text"), event.payload.get("turn")
        if not isinstance(text, str) or not isinstance(turn, int):
            continue
        if event.type == "user_message":
            last_turn = max(last_turn, turn)
            synthetic = event.payload.get("synthetic") is True
            typed = pending[2] if synthetic and pending is not None and pending[0] == turn else text
            pending = (turn, UserMessage(text, synthetic=synthetic), typed)
        elif event.type == "assistant_message" and pending is not None and pending[0] == turn:
            answered.append(HistoryTurn(turn, pending[1], AssistantMessage(text), pending[2]))
            pending = None
        elif event.type == "context_evicted":
            evicted.add(turn)
    kept = [entry for entry in answered if entry.turn not in evicted]
    return ConversationHistory(kept[-max_turns:] if max_turns > 0 else [], last_turn)
