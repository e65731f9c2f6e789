"""The agent loop and its parts: the chat loop (``chat``), history, context window, prompt
blocks, tool runner and slash commands. It consumes the seams and never imports a store.

The public names load on first use, so importing one part (``runtime.loop.commands``) does not
pull in the whole loop.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from specwire.runtime.loop.chat import InputSource, LoopResult, iter_messages, run_chat_loop

_EXPORTS = ("InputSource", "LoopResult", "iter_messages", "run_chat_loop")

__all__ = ["InputSource", "LoopResult", "iter_messages", "run_chat_loop"]


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(import_module("specwire.runtime.loop.chat"), name)
    raise AttributeError(f"module 'specwire.runtime.loop' has no attribute {name!r}")
