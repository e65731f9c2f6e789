"""The crew host: several roles sharing one catalog and one set of stores.

Each run is one session of one role: the entry role by default, another with ``--role NAME``.
The role's instructions are its system prompt; its model is the next of its ``model_pool``, else
``role.model``, else the crew's, tried with its ``model_fallbacks`` (``runtime.hosts.role_models``).
Every role shares the stores, so the plan one role writes is the plan the next role reads: the
plan is the coordination surface. A bundle built with scopes wires each role with its audience
(``build_session(Audience(role=…, crew=True))``): a role's facts are its own unless it shares
them with the crew. Roles hand work to each other with
the ``Delegate`` tool (``runtime.hosts.delegation``): the named role runs as a linked
sub-session and its answer comes back as the tool result.

``mcp_servers`` (the spec's MCP tool servers) are started once, after the start checks and
before the banner, as on cli (``runtime.hosts.tool_servers``: one instance for the run, working
in the working directory; one line and exit 2 when one that is not ``optional`` does not start);
every role's session, the one started and each delegated to, gets their tools as
``mcp__<server>__<tool>``. They are stopped when the session ends.

Input is the same as the cli host: stdin lines (``> `` prompt on a TTY) or ``--message TEXT``;
the answer streams as the cli's does, and on a terminal stderr shows the progress of the roles
delegated to (``runtime.hosts.activity``).
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from specwire.runtime.core.paths import StoreLayout
from specwire.runtime.core.scopes import Audience
from specwire.runtime.core.tool_types import DELEGATE_TOOL_NAME
from specwire.runtime.hosts.activity import Activity
from specwire.runtime.hosts.console import (
    describe,
    message_option,
    parse_argv,
    stderr_log,
)
from specwire.runtime.hosts.delegation import Crew
from specwire.runtime.hosts.interactive import run_console_session
from specwire.runtime.hosts.preflight import StartCheck, bundle_fragment, passes_start_checks
from specwire.runtime.hosts.role_models import RoleModels
from specwire.runtime.hosts.session_logs import database_session_logs
from specwire.runtime.hosts.terminal_stream import TerminalStream
from specwire.runtime.hosts.tool_servers import host_tool_servers
from specwire.runtime.hosts.types import (
    RoleConfig,
    SessionBuilder,
    TurnSetup,
    build_with_audience,
    takes_audience,
)
from specwire.runtime.models.select import ModelRef
from specwire.runtime.safety.secrets import SecretRef


def run_crew(
    *,
    spec_name: str,
    model: str | SecretRef,
    entry: str,
    roles: Sequence[RoleConfig],
    cwd: Path | None = None,
    argv: Sequence[str] | None = None,
    build_session: SessionBuilder,
    memory: Mapping[str, Any] | None = None,
    mcp_servers: Mapping[str, Mapping[str, Any]] | None = None,
) -> int:
    by_name = {role.name: role for role in roles}
    parser = argparse.ArgumentParser(prog=spec_name, description=f"Work with the {spec_name} crew.")
    message_option(parser, "a message for the role")
    parser.add_argument("--role", default=entry, help=f"the role to talk to (default: {entry})")
    args = parse_argv(parser, argv)
    if isinstance(args, int):
        return args
    role = by_name.get(args.role)
    if role is None:
        known = ", ".join(by_name) or "none"
        stderr_log(f'{spec_name}: unknown role "{args.role}" (roles: {known})\n')
        return 2
    check = StartCheck(
        spec_name, role_models_of(model, role), bundle_fragment(memory, build_session), cwd=cwd
    )
    if not passes_start_checks(check, stderr_log):
        return 2
    role_models = RoleModels(model, spec_name)
    chosen = role_models.for_role(role)
    if chosen is None:
        return 2
    takes = takes_audience(build_session)
    servers = host_tool_servers(mcp_servers, check.memory, stderr_log)
    if servers is not None:  # once, for every role: in the working directory
        servers.start("", (cwd or Path.cwd()).resolve())
    others = [name for name in by_name if name != role.name]

    def role_setup(name: str) -> TurnSetup:
        setup = build_with_audience(build_session, takes, Audience(role=name, crew=True))
        return servers.extend(setup, "") if servers is not None else setup

    try:
        setup = role_setup(role.name)
    except BaseException:
        if servers is not None:
            servers.close()
        raise
    shown = TerminalStream()
    # memory.state: postgres: the session the user talks to and every role delegated to log
    # in the database; None: files under the agent's folder.
    logs = database_session_logs(check.memory, spec_name, cwd)
    crew = Crew(
        spec_name=spec_name,
        entry=entry,
        roles=by_name,
        model_for=role_models.for_role,
        options=setup.options,
        sessions_dir=StoreLayout.for_cwd((cwd or Path.cwd()).resolve(), spec_name).sessions_dir,
        session_logs=logs,
        log=stderr_log,
        # Bundles built before scopes wire once: every role shares those tools and stores.
        role_setup=role_setup if takes else None,
        # A Ctrl-C in the turn also stops the role working on it.
        activity=Activity(stop=lambda: shown.cancel_requested),
    )
    crew.root_role = role.name
    if len(by_name) > 1 and setup.catalog.get(DELEGATE_TOOL_NAME) is None:
        setup.catalog.register(crew.tool(setup.catalog))
    try:
        stderr_log(
            f"{spec_name} · crew role {role.name} · model {chosen.model_id} · "
            f"{describe(setup.catalog, setup.options)} · other roles: "
            f"{', '.join(others) or 'none'} (--role NAME) · /help lists commands, /exit quits\n"
        )
        return run_console_session(
            spec_name=spec_name,
            target="crew",
            model=chosen,
            instructions=role.instructions,
            catalog=setup.catalog,
            options=setup.options,
            cwd=cwd,
            messages=args.message,
            session_info={"role": role.name, "entry": entry},
            stream=shown,
            logs=logs,
        )
    finally:
        crew.release()
        setup.release()
        if servers is not None:
            servers.close()


def role_models_of(model: ModelRef, role: RoleConfig) -> tuple[tuple[str, ModelRef], ...]:
    """The models the started role's sessions may run, with where the spec names them. Other
    roles' are read when a session of theirs starts (a role delegated to): the entry role runs
    without the variables only another role reads."""
    where = f"roles.{role.name}"
    found: list[tuple[str, ModelRef]] = [
        (f"{where}.modelPool[{n}]", item) for n, item in enumerate(role.model_pool)
    ]
    if not found:
        found.append((f"{where}.model", role.model) if role.model is not None else ("model", model))
    found += [(f"{where}.modelFallbacks[{n}]", item) for n, item in enumerate(role.model_fallbacks)]
    return tuple(found)
