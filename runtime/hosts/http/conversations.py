"""Turns of one conversation run in arrival order; different conversations run concurrently.

The turn itself is blocking work (model calls, tools, SQLite), so it runs in a worker thread;
the event loop only orders it. ``asyncio.Lock`` wakes its waiters first come, first served, so
one conversation's turns keep the order in which their requests arrived. The file lock inside
``run_turn`` still orders turns across processes.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TypeVar

import anyio.to_thread

Result = TypeVar("Result")


class ConversationTurns:
    def __init__(self) -> None:
        self._locks: dict[str, asyncio.Lock] = {}
        self._waiting: dict[str, int] = {}

    async def run(self, key: str, turn: Callable[[], Result]) -> Result:
        lock = self._locks.setdefault(key, asyncio.Lock())
        self._waiting[key] = self._waiting.get(key, 0) + 1
        try:
            async with lock:
                return await anyio.to_thread.run_sync(turn)
        finally:
            self._waiting[key] -= 1
            if self._waiting[key] == 0:  # nobody else queued: forget the conversation's lock
                del self._waiting[key]
                del self._locks[key]

    @property
    def active(self) -> int:
        """Conversations with a turn running or queued."""
        return len(self._locks)
