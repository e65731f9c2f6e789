"""The conversation the model sees, bounded by a message count and a character budget.

Messages are grouped by turn. When the window overflows, whole turns are evicted oldest first
(so a tool result never loses the call it answers); the current turn is never evicted. The user
message of each evicted turn is handed back so the loop can log it and pin it verbatim in the
requirements ledger. Turns seeded from a session log (``runtime.loop.history``) carry their tool
rounds too and are sized and evicted exactly like live ones.
"""

from __future__ import annotations

import json
from dataclasses import field

from specwire.runtime.core.lazy_dataclass import lazy_dataclass, lazy_methods_dataclass
from specwire.runtime.models.types import AssistantMessage, Message, UserMessage

DEFAULT_CONTEXT_MAX_MESSAGES = 400
DEFAULT_CONTEXT_MAX_CHARS = 400_000


@lazy_dataclass(frozen=True)
class EvictedUserMessage:
    """A user message dropped from the context to fit the budget."""

    # What the person typed (for an expanded slash command, the command line itself).
    text: str
    turn: int


@lazy_methods_dataclass
class _Turn:
    """One turn's messages while the context is fitted."""

    number: int
    messages: list[Message] = field(default_factory=list)
    typed: str | None = None


def message_size(message: Message) -> int:
    size = len(message.text)
    if isinstance(message, AssistantMessage):
        for call in message.tool_calls:
            size += len(call.name) + len(json.dumps(call.input, ensure_ascii=False))
    return size


class ContextWindow:
    def __init__(self, max_messages: int, max_chars: int) -> None:
        if max_messages < 1 or max_chars < 1:
            raise ValueError("context_max_messages and context_max_chars must be at least 1")
        self.max_messages = max_messages
        self.max_chars = max_chars
        self._turns: list[_Turn] = []

    def add(self, message: Message, turn: int, typed: str | None = None) -> None:
        """Append ``message`` to ``turn``; ``typed`` is the person's words for a user message."""
        if not self._turns or self._turns[-1].number != turn:
            self._turns.append(_Turn(turn))
        current = self._turns[-1]
        current.messages.append(message)
        if isinstance(message, UserMessage) and current.typed is None:
            current.typed = typed if typed is not None else message.text

    def messages(self) -> list[Message]:
        return [message for turn in self._turns for message in turn.messages]

    def _overflowing(self) -> bool:
        messages = self.messages()
        chars = sum(message_size(message) for message in messages)
        return len(messages) > self.max_messages or chars > self.max_chars

    def evict_overflow(self) -> list[EvictedUserMessage]:
        """Drop the oldest turns (never the newest) until the window fits."""
        evicted: list[EvictedUserMessage] = []
        while len(self._turns) > 1 and self._overflowing():
            oldest = self._turns.pop(0)
            if oldest.typed is not None:
                evicted.append(EvictedUserMessage(oldest.typed, oldest.number))
        return evicted
