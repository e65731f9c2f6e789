"""A stdio server started inside the ``bash`` tool's sandbox (issue 23 item 2).

The same launcher and rules as a ``bash`` call (``runtime.tools.shell.sandbox``): user, mount,
PID and network namespaces, a private root, Landlock; the workspace is the working folder and
the only place outside the server's own scratch it may write; the state folder (``.specwire/``:
facts, sessions, keys) is masked; the host's secret files are covered; the network is the
sandbox's own loopback. Besides the system folders and ``PATH``, the server may read and run
the folders its command and its absolute arguments name (``grantable_folders``). Its
environment is the one ``bash`` gets (the scrubbed allow-list) plus the spec's ``env``;
``HOME`` and ``TMPDIR`` are private folders in the scratch folder, removed with it. With
``network: outbound`` it reaches public hosts through bash's egress proxy (its proxy variables
set, as for ``bash: {network: outbound}``); by default it has no network.

Where the sandbox cannot be set up the server does not start (one line), unless the spec marks
it ``sandbox: false``; the server's limits are bash's defaults, but CPU time is the largest a
spec may give bash (a server lives as long as the bundle).
"""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path

from specwire.runtime.tools.mcp_servers.config import StdioServer, resolved
from specwire.runtime.tools.mcp_servers.errors import McpServerError
from specwire.runtime.tools.shell.errors import EgressUnavailableError
from specwire.runtime.tools.shell.host_code import InterpreterInsideWorkspaceError
from specwire.runtime.tools.shell.sandbox import (
    SandboxPolicy,
    grantable_folders,
    sandbox_unavailable,
    scrubbed_environment,
)
from specwire.runtime.tools.shell.settings import LIMIT_KNOBS, BashSettings

SERVER_SETTINGS = BashSettings(network="none", cpu_seconds=LIMIT_KNOBS["cpuSeconds"][1])


def server_settings(server: StdioServer) -> BashSettings:
    return dataclasses.replace(SERVER_SETTINGS, network=server.network)


def require_server_sandbox(server: StdioServer, workspace: Path) -> None:
    """Refuse (one line) a confined server where no sandbox can be set up."""
    reason = sandbox_unavailable(workspace, SERVER_SETTINGS)
    if reason is not None:
        raise McpServerError(
            f"MCP server {server.name!r} runs in the bash tool's sandbox and none can be set "
            f"up here ({reason}); mark it `sandbox: false` in the spec to run it unconfined"
        )


def confined_command(
    server: StdioServer, workspace: Path, scratch: Path, environ: dict[str, str]
) -> list[str]:
    """The launcher's command line that starts ``server`` confined (``scratch``: an empty
    private folder, removed after the server ends)."""
    home = scratch / "home"
    env = scrubbed_environment(environ, home=home, tmpdir=scratch / "tmp")
    env["PWD"] = str(workspace)
    env.update(resolved(server.env))
    program = shutil.which(server.command, path=env["PATH"])
    if program is None:
        raise McpServerError(f"MCP server {server.name!r}: {server.command!r} is not on PATH")
    readable = grantable_folders([program, *server.args], workspace)
    try:
        return SandboxPolicy(workspace, server_settings(server)).confined_argv(
            [program, *server.args], scratch, env, readable=readable, writable=[home]
        )
    except (InterpreterInsideWorkspaceError, EgressUnavailableError) as exc:
        raise McpServerError(f"MCP server {server.name!r}: {exc}") from exc
