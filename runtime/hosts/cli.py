"""The cli host: a terminal REPL with slash commands around ``run_chat_loop``.

Reads one message per line from stdin (a TTY gets a ``> `` prompt; piped input works the same
way without it) until end of input or ``/exit``; ``/help`` lists the commands. ``--message TEXT``
(repeatable) runs those messages instead of reading stdin. The session log goes to
``<cwd>/.specwire/sessions/<session id>.jsonl`` and its path is printed on stderr at the end.

``mcp_servers`` (the spec's MCP tool servers) are started after the start checks, before the
banner; their tools join the catalog as ``mcp__<server>__<tool>``.

Exit status: 0 after a session; 2 when the model is unavailable (or its id is a secret
reference whose variable is not set), an MCP server that is not optional does not start, or the
arguments are wrong;
130 on Ctrl-C (the session is still torn down: handoff written, log closed).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from specwire.runtime.core.paths import StoreLayout
from specwire.runtime.hosts.console import (
    describe,
    message_option,
    parse_and_load,
    stderr_log,
)
from specwire.runtime.hosts.interactive import run_console_session
from specwire.runtime.hosts.preflight import StartCheck, bundle_fragment
from specwire.runtime.hosts.types import SessionBuilder, TurnSetup
from specwire.runtime.safety.secrets import SecretRef
from specwire.runtime.sessions.store import SessionLogs
from specwire.runtime.wiring import parse_fragment, session_logs_for, state_in_database


def run_cli(
    *,
    spec_name: str,
    model: str | SecretRef,
    instructions: str,
    cwd: Path | None = None,
    argv: Sequence[str] | None = None,
    build_session: SessionBuilder,
    memory: Mapping[str, Any] | None = None,
    mcp_servers: Mapping[str, Mapping[str, Any]] | None = None,
) -> int:
    parser = argparse.ArgumentParser(
        prog=spec_name, description=f"Chat with the {spec_name} agent."
    )
    message_option(parser, "a message to send")
    check = StartCheck(
        spec_name, (("agent.model", model),), bundle_fragment(memory, build_session), cwd=cwd
    )
    started = parse_and_load(parser, argv, model, spec_name, check)
    if isinstance(started, int):
        return started
    args, chosen = started
    setup = build_session()
    stop_servers = _connect_servers(mcp_servers, setup, cwd)
    try:
        stderr_log(
            f"{spec_name} · model {chosen.model_id} · {describe(setup.catalog, setup.options)} · "
            "/help lists commands, /exit quits\n"
        )
        return run_console_session(
            spec_name=spec_name,
            target="cli",
            model=chosen,
            instructions=instructions,
            catalog=setup.catalog,
            options=setup.options,
            cwd=cwd,
            messages=args.message,
            logs=_session_logs(check, spec_name, cwd),
        )
    finally:
        stop_servers()
        setup.release()


def _session_logs(check: StartCheck, spec_name: str, cwd: Path | None) -> SessionLogs | None:
    """In the database with ``memory.state: postgres``; else None (files)."""
    if check.memory is None:
        return None
    fragment = parse_fragment(check.memory)
    if not state_in_database(fragment):
        return None
    layout = StoreLayout.for_cwd((cwd or Path.cwd()).resolve(), spec_name)
    return session_logs_for(fragment, None, layout.sessions_dir)


def _connect_servers(
    mcp_servers: Mapping[str, Mapping[str, Any]] | None, setup: TurnSetup, cwd: Path | None
) -> Callable[[], None]:
    """The spec's MCP tool servers started and their tools registered (``mcp_servers``); a
    failure releases what ``build_session`` opened before it stops the start."""
    if not mcp_servers:
        return lambda: None
    from specwire.runtime.tools.mcp_servers.wiring import connect_mcp_servers

    try:
        return connect_mcp_servers(
            mcp_servers, setup.catalog, cwd or Path.cwd(), lambda line: stderr_log(f"{line}\n")
        )
    except BaseException:
        setup.release()
        raise
