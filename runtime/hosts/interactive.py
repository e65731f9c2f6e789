"""One interactive console session around ``run_chat_loop`` (the cli and crew hosts).

Reads stdin lines (a ``> `` prompt on a TTY) or the given messages, logs the session under
``<cwd>/.specwire/sessions/``, prints the log's path at the end. Answers stream to stdout as the
model writes them (``runtime.hosts.terminal_stream``); a Ctrl-C during an answer stops that
answer and the session goes on. Exit status: 0 after a session, 1 when the model fails
mid-session, 130 on Ctrl-C at the prompt or a second one in a turn (the session is still torn
down).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from specwire.runtime.core.ids import new_session_id
from specwire.runtime.core.paths import StoreLayout
from specwire.runtime.core.seams import LoopOptions
from specwire.runtime.core.tool_types import ToolCatalog
from specwire.runtime.hosts.console import stderr_log, stdin_reader
from specwire.runtime.hosts.terminal_stream import CancelOnInterrupt, TerminalStream
from specwire.runtime.loop import run_chat_loop
from specwire.runtime.models import Model, ModelError
from specwire.runtime.models.streaming import StreamCancelled
from specwire.runtime.sessions.store import FileSessionLogs, SessionLogs


def run_console_session(
    *,
    spec_name: str,
    target: str,
    model: Model,
    instructions: str,
    catalog: ToolCatalog,
    options: LoopOptions,
    cwd: Path | None,
    messages: Sequence[str],
    session_info: Mapping[str, Any] | None = None,
    stream: TerminalStream | None = None,
    logs: SessionLogs | None = None,
) -> int:
    """``logs``: where the session's log is written (default: files under the agent's
    folder; the database with ``memory.state: postgres``)."""
    layout = StoreLayout.for_cwd((cwd or Path.cwd()).resolve(), spec_name)
    if logs is None:
        logs = FileSessionLogs(layout.sessions_dir)
    session_log = logs.open(new_session_id())
    code = 0
    shown = stream if stream is not None else TerminalStream()
    interrupts = CancelOnInterrupt(shown)
    read = _reader(messages) if messages else stdin_reader()
    try:
        with interrupts.installed():
            run_chat_loop(
                model=model,
                instructions=instructions,
                catalog=catalog,
                session_log=session_log,
                inputs=interrupts.reading(read),
                output=shown.output,
                spec_name=spec_name,
                target=target,
                session_info=session_info,
                log=stderr_log,
                stream=shown,
                **options,
            )
    except (KeyboardInterrupt, StreamCancelled):  # the latter only from a loop that lets it out
        stderr_log("\ninterrupted\n")
        code = 130
    except ModelError as exc:
        stderr_log(f"{spec_name}: {exc}\n")
        code = 1
    path = getattr(session_log, "path", None)
    where = path if path is not None else f"{session_log.session_id} (in the database)"
    stderr_log(f"session log: {where}\n")
    return code


def _reader(messages: Sequence[str]) -> Callable[[], str | None]:
    pending = iter(list(messages))
    return lambda: next(pending, None)
