"""One routed message → one single-turn session run, for the per-turn hosts (channel, managed).

Each message runs ``run_chat_loop`` once, appending to the conversation's session log and
seeded with the conversation so far (read back from that log).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from runtime.events import SessionLog
from runtime.hosts.types import TurnSetup
from runtime.loop import LoopResult, run_chat_loop
from runtime.loop_history import history_from_log
from runtime.models import Model

_ROUTED = re.compile(r"^\s*([^\s:]+)\s*:\s*(.*?)\s*$", re.DOTALL)


@dataclass(frozen=True)
class RoutedLine:
    key: str
    message: str


def parse_routed(line: str) -> RoutedLine | None:
    """``<key>: <message>`` with a key free of spaces and colons and a non-empty message."""
    match = _ROUTED.match(line)
    if match is None or not match.group(2):
        return None
    return RoutedLine(match.group(1), match.group(2))


def prefixed(key: str, text: str) -> str:
    return "\n".join(f"{key}: {line}" for line in (text.splitlines() or [""]))


def run_turn(
    *,
    model: Model,
    instructions: str,
    setup: TurnSetup,
    sessions_dir: Path,
    session_id: str,
    message: str,
    spec_name: str,
    target: str,
    info: dict[str, Any],
    log: Callable[[str], None],
) -> tuple[LoopResult, list[str]]:
    session_log = SessionLog(sessions_dir, session_id)
    replies: list[str] = []
    try:
        result = run_chat_loop(
            model=model,
            instructions=instructions,
            catalog=setup.catalog,
            session_log=session_log,
            inputs=[message],
            output=replies.append,
            single_turn=True,
            history=history_from_log(session_log.path),
            spec_name=spec_name,
            target=target,
            session_info=info,
            log=log,
            **setup.options,
        )
    finally:
        setup.release()
    return result, replies
