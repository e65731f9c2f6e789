"""One routed message → one single-turn session run, for the per-turn hosts (channel, managed).

Each message runs ``run_chat_loop`` once, appending to the conversation's session log and
seeded with the conversation so far (read back from that log). One turn of a conversation runs
at a time, across processes, under the logs' ``conversation_lock``: on files
``runtime.fs.locking.FileLock`` (``sessions/<sess_…>.lock``), in PostgreSQL (``memory.state:
postgres``, ``runtime.sessions.postgres``) an advisory lock on a connection of its own, so
workers on different hosts order a conversation's turns through the database. A second turn
waits up to ``CONVERSATION_WAIT_S`` and then fails with ``LockTimeoutError``; a killed host never
leaves the conversation locked.

After each turn, a spec with ``memory.dream`` starts its dream in the background when the window
is due (``runtime.dream.schedule``): off the turn path, at most once per window, never failing
the turn. The host hands it the model session ``mode: full`` runs its model phase in (the
turns' model, metered against the dream's budget: ``runtime.hosts.dream_session``).
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from specwire.runtime.fs.locking import FileLock
from specwire.runtime.hosts.console import stderr_log, stdout_line
from specwire.runtime.hosts.types import TurnSetup
from specwire.runtime.loop import LoopResult, run_chat_loop
from specwire.runtime.loop.history import history_from_log
from specwire.runtime.models import Model
from specwire.runtime.models.streaming import StreamSink
from specwire.runtime.sessions.store import FileSessionLogs, SessionLogs

# A turn may run a model and tools for minutes; waiting longer means something is stuck.
CONVERSATION_WAIT_S = 600.0
# How long a console host waits at exit for a dream run a turn started.
DREAM_WAIT_S = 120.0

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
    sessions_dir: Path | None,
    session_id: str,
    message: str,
    spec_name: str,
    target: str,
    info: dict[str, Any],
    log: Callable[[str], None],
    lock_wait_s: float = CONVERSATION_WAIT_S,
    stream: StreamSink | None = None,
    logs: SessionLogs | None = None,
    dream_session: Callable[[], Any] | None = None,
) -> tuple[LoopResult, list[str]]:
    """``stream`` receives the answer as it is written (``run_chat_loop(stream=…)``);
    ``logs`` is where the conversation's log lives (default: files in ``sessions_dir``);
    ``dream_session`` gives the model session a due dream runs ``mode: full`` in
    (``runtime.hosts.dream_session``; called only when the spec has a dream)."""
    replies: list[str] = []
    try:  # the turn's wiring is released however the turn ends, a lock timeout included
        if logs is None:
            if sessions_dir is None:
                raise ValueError("run_turn needs sessions_dir or logs")
            logs = FileSessionLogs(sessions_dir)
        with logs.conversation_lock(session_id, lock_wait_s):
            # Opened under the lock: the log's sequence numbers and the history's turn numbers
            # are read after any other process finished its turn of this conversation.
            session_log = logs.open(session_id)
            result = run_chat_loop(
                model=model,
                instructions=instructions,
                catalog=setup.catalog,
                session_log=session_log,
                inputs=[message],
                output=replies.append,
                single_turn=True,
                history=history_from_log(session_log.events()),
                spec_name=spec_name,
                target=target,
                session_info=info,
                log=log,
                stream=stream,
                **setup.options,
            )
    finally:
        setup.release()
    _dream_if_due(setup, model, log, dream_session)
    return result, replies


def _dream_if_due(
    setup: TurnSetup,
    model: Model,
    log: Callable[[str], None],
    dream_session: Callable[[], Any] | None = None,
) -> None:
    """After a turn: the spec's dream, in the background, when its window is due
    (``runtime.dream.schedule``), with the model session ``dream_session`` gives. Never fails
    the turn that was just answered."""
    memory = setup.options.get("memory")
    dream = memory.dream if memory is not None else None
    if dream is None:
        return
    try:
        dream(model.model_id, dream_session() if dream_session is not None else None)
    except Exception as exc:
        log(f"[dream] not started ({type(exc).__name__}: {exc})\n")


def conversation_lock(
    sessions_dir: Path, session_id: str, *, wait_s: float = CONVERSATION_WAIT_S
) -> FileLock:
    """One turn of a conversation at a time, across processes (two hosts may serve one)."""
    return FileLock(
        sessions_dir / f"{session_id}.lock", wait_s=wait_s, what=f"conversation {session_id}"
    )


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
    one conversation's failure must not stop the others. The status is 0 when every line was
    answered, 2 when one was not (a script feeding the console learns it failed), 130 on Ctrl-C.
    """
    unanswered = 0
    try:
        for line in lines:
            if not line.strip():
                continue
            routed = parse_routed(line)
            if routed is None:
                stderr_log(f'{spec_name}: expected "{line_shape}", got {line.strip()!r}\n')
                unanswered += 1
                continue
            try:
                replies = handle(routed)
            except RefusedLine as refused:
                stderr_log(f"{refused}\n")
                unanswered += 1
                continue
            except Exception as exc:
                stderr_log(f"{routed.key}: error: {type(exc).__name__}: {exc}\n")
                unanswered += 1
                continue
            for reply in replies:
                stdout_line(prefixed(routed.key, reply))
    except KeyboardInterrupt:
        stderr_log("\ninterrupted\n")
        return 130
    finish_dreams(stderr_log)
    return 2 if unanswered else 0


def finish_dreams(log: Callable[[str], None], timeout_s: float = DREAM_WAIT_S) -> None:
    """Before a console host exits: let the dream runs its turns started finish."""
    schedule = sys.modules.get(
        "specwire.runtime.dream.schedule"
    )  # loaded only by a spec with a dream
    if schedule is not None:
        schedule.finish_dreams(timeout_s, log)
