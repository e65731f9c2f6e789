"""The cli host: a terminal REPL with slash commands around ``run_chat_loop``.

Reads one message per line from stdin (a TTY gets a ``> `` prompt; piped input works the same
way without it) until end of input or ``/exit``; ``/help`` lists the commands. ``--message TEXT``
(repeatable) runs those messages instead of reading stdin. The session log goes to
``<cwd>/.specwire/sessions/<session id>.jsonl`` and its path is printed on stderr at the end.

``mcp_servers`` (the spec's MCP tool servers) are started after the start checks, before the
banner; their tools join the catalog as ``mcp__<server>__<tool>``. With ``thredz``, its server's
tools are not offered that way: the memory tools are bridged to them
(``runtime.tools.mcp_servers.thredz``), and a Thredz that does not start degrades the run to the
local stores with one logged line instead of stopping it.

``--dream`` runs the spec's ``memory.dream`` now instead of a session
(``runtime.hosts.dream_run``; ``--force`` even when its window already had a run).

Exit status: 0 after a session; 2 when the model is unavailable (or its id is a secret
reference whose variable is not set), an MCP server that is not optional does not start, or the
arguments are wrong;
130 on Ctrl-C (the session is still torn down: handoff written, log closed).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from specwire.runtime.core.startup import collector_paused
from specwire.runtime.hosts.console import (
    describe,
    message_option,
    parse_and_load,
    stderr_log,
)
from specwire.runtime.hosts.interactive import run_console_session
from specwire.runtime.hosts.preflight import StartCheck, bundle_fragment
from specwire.runtime.hosts.session_logs import database_session_logs
from specwire.runtime.hosts.types import SessionBuilder, TurnSetup
from specwire.runtime.safety.secrets import SecretRef

if TYPE_CHECKING:
    from specwire.runtime.tools.mcp_servers.errors import McpServerError
    from specwire.runtime.tools.mcp_servers.wiring import BridgedServer


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
    parser.add_argument(
        "--dream",
        action="store_true",
        help="run the spec's memory.dream now (with mode full, a budget_usd and a priced "
        "model, its model phase too) and exit",
    )
    parser.add_argument(
        "--force", action="store_true", help="with --dream: run even if this window had a run"
    )
    fragment = bundle_fragment(memory, build_session)
    check = StartCheck(spec_name, (("agent.model", model),), fragment, cwd=cwd)
    with collector_paused():  # start-up: the model's imports
        started = parse_and_load(parser, argv, model, spec_name, check)
    if isinstance(started, int):
        return started
    args, chosen = started
    if args.dream:
        from specwire.runtime.hosts.dream_run import run_bundle_dream

        return run_bundle_dream(
            fragment,
            chosen,
            spec_name=spec_name,
            cwd=cwd or Path.cwd(),
            force=args.force,
            log=stderr_log,
        )
    with collector_paused():  # start-up: the wiring and its imports
        setup = build_session()
    thredz = _thredz(fragment)
    stop_servers, bridged = _connect_servers(mcp_servers, setup, cwd, thredz)
    catalog, options = setup.catalog, setup.options
    if thredz is not None:
        from specwire.runtime.tools.mcp_servers.thredz import ThredzLink, bridge_memory
        from specwire.runtime.tools.mcp_servers.wiring import BridgedServer

        reached = bridged if isinstance(bridged, BridgedServer) else None
        link = ThredzLink(
            thredz["server"],
            reached.call if reached is not None else None,
            reached.tools if reached is not None else frozenset(),
            stderr_log,
            why=str(bridged) if bridged is not None and reached is None else None,
        )
        catalog, options = bridge_memory(catalog, options, link, goals=bool(thredz["goals"]))
        if fragment is not None:
            from specwire.runtime.learning.thredz_home import with_thredz_learning
            from specwire.runtime.wiring import parse_fragment

            catalog = with_thredz_learning(
                catalog, parse_fragment(fragment), link, cwd or Path.cwd(), stderr_log
            )
    try:
        stderr_log(
            f"{spec_name} · model {chosen.model_id} · {describe(catalog, options)} · "
            "/help lists commands, /exit quits\n"
        )
        return run_console_session(
            spec_name=spec_name,
            target="cli",
            model=chosen,
            instructions=instructions,
            catalog=catalog,
            options=options,
            cwd=cwd,
            messages=args.message,
            logs=database_session_logs(check.memory, spec_name, cwd),
        )
    finally:
        stop_servers()
        setup.release()


def _thredz(fragment: Mapping[str, Any] | None) -> Mapping[str, Any] | None:
    """The fragment's ``thredz`` block (its server's name and whether goals are mirrored)."""
    block = fragment.get("thredz") if fragment is not None else None
    return block if isinstance(block, Mapping) and isinstance(block.get("server"), str) else None


def _connect_servers(
    mcp_servers: Mapping[str, Mapping[str, Any]] | None,
    setup: TurnSetup,
    cwd: Path | None,
    thredz: Mapping[str, Any] | None,
) -> tuple[Callable[[], None], BridgedServer | McpServerError | None]:
    """The spec's MCP tool servers started and their tools registered (``mcp_servers``; the
    Thredz server kept apart for the memory bridge); a failure releases what
    ``build_session`` opened before it stops the start."""
    if not mcp_servers:
        return (lambda: None), None
    from specwire.runtime.tools.mcp_servers.wiring import connect_with_bridge

    try:
        return connect_with_bridge(
            mcp_servers,
            setup.catalog,
            cwd or Path.cwd(),
            lambda line: stderr_log(f"{line}\n"),
            bridged=thredz["server"] if thredz is not None else None,
        )
    except BaseException:
        setup.release()
        raise
