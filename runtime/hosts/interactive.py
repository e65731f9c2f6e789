"""One interactive console session around ``run_chat_loop`` (the cli and crew hosts).

Reads stdin lines (a ``> `` prompt on a TTY) or the given messages, logs the session under
``<cwd>/.specwire/sessions/``, prints the log's path at the end. Exit status: 0 after a session,
1 when the model fails mid-session, 130 on Ctrl-C (the session is still torn down).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from specwire.runtime.core.ids import new_session_id
from specwire.runtime.core.paths import StoreLayout
from specwire.runtime.core.seams import LoopOptions
from specwire.runtime.core.tool_types import ToolCatalog
from specwire.runtime.hosts.console import stderr_log, stdin_reader, stdout_line
from specwire.runtime.loop import run_chat_loop
from specwire.runtime.models import Model, ModelError
from specwire.runtime.sessions.log import SessionLog


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
) -> int:
    layout = StoreLayout.for_cwd((cwd or Path.cwd()).resolve(), spec_name)
    session_log = SessionLog(layout.sessions_dir, new_session_id())
    code = 0
    try:
        run_chat_loop(
            model=model,
            instructions=instructions,
            catalog=catalog,
            session_log=session_log,
            inputs=list(messages) if messages else stdin_reader(),
            output=stdout_line,
            spec_name=spec_name,
            target=target,
            session_info=session_info,
            log=stderr_log,
            **options,
        )
    except KeyboardInterrupt:
        stderr_log("\ninterrupted\n")
        code = 130
    except ModelError as exc:
        stderr_log(f"{spec_name}: {exc}\n")
        code = 1
    stderr_log(f"session log: {session_log.path}\n")
    return code
