"""One routed message → one single-turn session run, for the per-turn hosts (channel, managed).

Each message runs ``run_chat_loop`` once, appending to the conversation's session log and
seeded with the conversation so far (read back from that log).
"""

from __future__ import annotations

import fcntl
import os
import re
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from runtime.events import SessionLog
from runtime.hosts.console import stderr_log, stdout_line
from runtime.hosts.types import TurnSetup
from runtime.loop import LoopResult, run_chat_loop
from runtime.loop.history import history_from_log
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
    replies: list[str] = []
    with _conversation_lock(sessions_dir, session_id):
        # Opened under the lock: the log's sequence numbers and the history's turn numbers are
        # read after any other process finished its turn of this conversation.
        session_log = SessionLog(sessions_dir, session_id)
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


@contextmanager
def _conversation_lock(sessions_dir: Path, session_id: str) -> Iterator[None]:
    """One turn of a conversation at a time, across processes (two hosts may serve one)."""
    sessions_dir.mkdir(parents=True, exist_ok=True)
    fd = os.open(sessions_dir / f"{session_id}.lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the lock


class RefusedLine(Exception):
    """A routed line that is not run; the message says why (printed on stderr as is)."""


def serve_routed_lines(
    lines: Iterable[str],
    *,
    spec_name: str,
    line_shape: str,
    handle: Callable[[RoutedLine], list[str]],
) -> int:
    """The console loop both per-turn hosts share: route each line, run it, print the replies.

    Malformed lines, refused lines and failed turns are reported on stderr and serving goes on:
    one conversation's failure must not stop the others. Ctrl-C ends with status 130.
    """
    try:
        for line in lines:
            if not line.strip():
                continue
            routed = parse_routed(line)
            if routed is None:
                stderr_log(f'{spec_name}: expected "{line_shape}", got {line.strip()!r}\n')
                continue
            try:
                replies = handle(routed)
            except RefusedLine as refused:
                stderr_log(f"{refused}\n")
                continue
            except Exception as exc:
                stderr_log(f"{routed.key}: error: {type(exc).__name__}: {exc}\n")
                continue
            for reply in replies:
                stdout_line(prefixed(routed.key, reply))
    except KeyboardInterrupt:
        stderr_log("\ninterrupted\n")
        return 130
    return 0
