"""Earlier turns of a conversation, read back from its session log.

Per-turn hosts (channel, managed) run one single-turn loop per message; seeding the loop with
the conversation so far keeps the thread coherent. Only user and final assistant messages are
replayed (tool calls stay in the log, where the proof ladder reads them).
"""

from __future__ import annotations

from pathlib import Path

from runtime.events import read_events
from runtime.models.types import AssistantMessage, Message, UserMessage


def history_from_log(path: Path, max_turns: int = 50) -> list[Message]:
    """User/assistant pairs from a session log, oldest first, at most ``max_turns`` of them.

    For an expanded slash command the synthetic message (what the model saw) is replayed.
    """
    pairs: list[tuple[UserMessage, AssistantMessage]] = []
    pending: UserMessage | None = None
    for event in read_events(path):
        text = event.payload.get("text")
        if not isinstance(text, str):
            continue
        if event.type == "user_message":
            synthetic = event.payload.get("synthetic") is True
            pending = UserMessage(text, synthetic=synthetic)
        elif event.type == "assistant_message" and pending is not None:
            pairs.append((pending, AssistantMessage(text)))
            pending = None
    kept = pairs[-max_turns:] if max_turns > 0 else []
    return [message for pair in kept for message in pair]
