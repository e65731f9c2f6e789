"""The servers' MCP sessions, held open on one background event loop.

The agent loop is synchronous and the ``mcp`` SDK is async: one daemon thread runs an asyncio
loop, each server gets one task there that opens its transport and session, lists its tools
and then waits for ``close``; a tool call is a coroutine sent to that loop and waited for with
a deadline. The SDK's context managers are entered and left inside the server's own task, as
anyio requires.

A stdio server runs inside the ``bash`` tool's sandbox (``confinement.py``): the workspace is its
working folder, the state folder is out of its reach, its environment is bash's plus the spec's
``env``. One the spec marks ``sandbox: false`` runs unconfined in the workspace with an
environment of the spec's ``env``, ``PATH`` and ``HOME`` (a private empty folder, removed at the
end) only (the other variables the SDK would inherit — ``USER``, ``LOGNAME``, ``SHELL``,
``TERM`` — are set empty unless the spec gives them). Either way its stderr goes to a private
temporary file whose last line explains a failed start.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import math
import os
import sys
import tempfile
import threading
from collections.abc import Coroutine, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO, TypeVar

from specwire.runtime.core.paths import SPECWIRE_DIRNAME
from specwire.runtime.safety.framing import neutralize
from specwire.runtime.safety.redaction import redact
from specwire.runtime.tools.mcp_servers.config import HttpServer, McpServer, StdioServer, resolved
from specwire.runtime.tools.mcp_servers.confinement import confined_command, require_server_sandbox
from specwire.runtime.tools.mcp_servers.errors import McpServerError
from specwire.runtime.tools.mcp_servers.state_folder import names_state_folder

if TYPE_CHECKING:
    from mcp import ClientSession
    from mcp.types import CallToolResult
    from mcp.types import Tool as McpTool

T = TypeVar("T")

# Variables the SDK passes to a stdio server unless overridden: blanked (only PATH is kept).
_SDK_INHERITED = ("HOME", "LOGNAME", "SHELL", "TERM", "USER")
# The most tools one server may list (pages are followed up to this count).
MAX_TOOLS_PER_SERVER = 256
_REASON_CHARS = 200


@dataclass
class ServerSession:
    """One started server: its session and the tools it listed."""

    server: McpServer
    session: ClientSession
    tools: list[McpTool]
    stderr: TextIO | None = None


@dataclass
class McpConnections:
    """The event loop thread and every started server's task."""

    loop: asyncio.AbstractEventLoop = field(default_factory=asyncio.new_event_loop)
    _stop: asyncio.Event | None = None
    _tasks: list[concurrent.futures.Future[None]] = field(default_factory=list)
    _thread: threading.Thread | None = None

    def __post_init__(self) -> None:
        self._thread = threading.Thread(
            target=self.loop.run_forever, name="mcp-servers", daemon=True
        )
        self._thread.start()
        self._stop = self.run(_new_event(), timeout=5.0)

    def run(self, coroutine: Coroutine[Any, Any, T], timeout: float) -> T:
        """Run ``coroutine`` on the loop and wait at most ``timeout`` seconds for it."""
        future = asyncio.run_coroutine_threadsafe(coroutine, self.loop)
        try:
            return future.result(timeout)
        except concurrent.futures.TimeoutError:
            future.cancel()
            raise

    def start_all(
        self,
        servers: list[McpServer],
        workspace: Path,
        deadline: float,
        longer: Mapping[str, float] | None = None,
    ) -> list[ServerSession | McpServerError]:
        """Start every server at once (a start costs its slowest server, not their sum); each
        initializes its session and lists its tools within ``deadline`` seconds (a server named
        in ``longer``: that many), or is an ``McpServerError`` (one line), in ``servers``
        order."""
        assert self._stop is not None
        pending = []
        for server in servers:
            allowed = (longer or {}).get(server.name, deadline)
            ready: concurrent.futures.Future[ServerSession] = concurrent.futures.Future()
            task = asyncio.run_coroutine_threadsafe(
                _hold(server, workspace, allowed, ready, self._stop), self.loop
            )
            self._tasks.append(task)
            pending.append((server, ready, task, allowed))
        return [
            self._wait(server, ready, task, allowed) for server, ready, task, allowed in pending
        ]

    def _wait(
        self,
        server: McpServer,
        ready: concurrent.futures.Future[ServerSession],
        task: concurrent.futures.Future[None],
        deadline: float,
    ) -> ServerSession | McpServerError:
        try:
            return ready.result(deadline + 5.0)
        except concurrent.futures.TimeoutError:
            task.cancel()
            return McpServerError(
                f"MCP server {server.name!r} did not list its tools within {deadline:g} s"
            )
        except McpServerError as exc:
            return exc
        except Exception as exc:  # the SDK's and the transport's errors, whatever they are
            return McpServerError(f"MCP server {server.name!r} did not start: {_reason(exc)}")

    def call(
        self, started: ServerSession, tool: str, arguments: dict[str, Any], timeout: float
    ) -> CallToolResult:
        return self.run(
            started.session.call_tool(tool, arguments, read_timeout_seconds=timeout),
            timeout + 5.0,
        )

    def close(self) -> None:
        """Stop every server (each task leaves its session and transport) and the loop."""
        if self._stop is not None and self.loop.is_running():
            self.loop.call_soon_threadsafe(self._stop.set)
            for task in self._tasks:
                with contextlib.suppress(Exception):
                    task.result(10.0)
            self.loop.call_soon_threadsafe(self.loop.stop)
        if self._thread is not None:
            self._thread.join(10.0)
        if not self.loop.is_running():
            self.loop.close()


async def _new_event() -> asyncio.Event:
    return asyncio.Event()


async def _hold(
    server: McpServer,
    workspace: Path,
    deadline: float,
    ready: concurrent.futures.Future[ServerSession],
    stop: asyncio.Event,
) -> None:
    import anyio
    from mcp import ClientSession

    # The server's stderr outlives its session, so a failure can quote its last line.
    stdio = isinstance(server, StdioServer)
    stderr = tempfile.TemporaryFile("w+", encoding="utf-8") if stdio else None  # noqa: SIM115
    # A private, empty home (removed at the end): npm and others write their logs and caches
    # there, never in the workspace or the user's home.
    home = tempfile.TemporaryDirectory(prefix="specwire-mcp-home-") if stdio else None  # noqa: SIM115
    try:
        # One cancel scope around the whole session (anyio's scopes must nest): its deadline
        # covers the start and is lifted once the tools are listed.
        with anyio.CancelScope(deadline=anyio.current_time() + deadline) as scope:
            async with contextlib.AsyncExitStack() as stack:
                read, write = await _transport(stack, server, workspace, stderr, home)
                session = await stack.enter_async_context(ClientSession(read, write))
                await session.initialize()
                tools = await _list_tools(session)
                scope.deadline = math.inf
                ready.set_result(ServerSession(server, session, tools, stderr))
                await stop.wait()
        if scope.cancelled_caught and not ready.done():
            ready.set_exception(
                McpServerError(
                    f"MCP server {server.name!r} did not list its tools within {deadline:g} s"
                    + _stderr_note(stderr)
                )
            )
    except BaseException as exc:  # noqa: BLE001 - handed to the waiting thread, never lost
        if not ready.done():
            ready.set_exception(_with_stderr(exc, server, stderr))
        if not isinstance(exc, Exception):
            raise
    finally:
        if stderr is not None:
            stderr.close()
        if home is not None:
            home.cleanup()


async def _transport(
    stack: contextlib.AsyncExitStack[Any],
    server: McpServer,
    workspace: Path,
    stderr: TextIO | None,
    home: tempfile.TemporaryDirectory[str] | None,
) -> tuple[Any, Any]:
    if isinstance(server, StdioServer):
        from mcp import StdioServerParameters, stdio_client

        _refuse_state_folder(server, workspace)
        assert home is not None
        if server.sandbox:
            import anyio

            # The first start probes the sandbox (a process): off the loop's thread.
            await anyio.to_thread.run_sync(require_server_sandbox, server, workspace)
            # The launcher gets the SDK's default environment; the server, only ``env``.
            launcher = confined_command(server, workspace, Path(home.name), dict(os.environ))
            parameters = StdioServerParameters(
                command=launcher[0], args=launcher[1:], cwd=str(workspace)
            )
        else:
            parameters = StdioServerParameters(
                command=server.command,
                args=list(server.args),
                env=stdio_environment(server, Path(home.name)),
                cwd=str(workspace),
            )
        read, write = await stack.enter_async_context(
            stdio_client(parameters, errlog=stderr or sys.stderr)
        )
        return read, write
    assert isinstance(server, HttpServer)
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    client = await stack.enter_async_context(
        httpx2.AsyncClient(
            headers=resolved(server.headers), timeout=httpx2.Timeout(30.0, read=300.0)
        )
    )
    read, write = await stack.enter_async_context(
        streamable_http_client(server.url, http_client=client)
    )
    return read, write


def stdio_environment(server: StdioServer, home: Path | None = None) -> dict[str, str]:
    """The server's whole environment: the SDK's inherited names blanked, ``PATH``, ``HOME``
    (a private empty folder), the spec's ``env``."""
    environment = dict.fromkeys(_SDK_INHERITED, "")
    environment["PATH"] = os.environ.get("PATH", os.defpath)
    if home is not None:
        environment["HOME"] = str(home)
    environment.update(resolved(server.env))
    return environment


def _refuse_state_folder(server: StdioServer, workspace: Path) -> None:
    """A stdio server never names the state folder (facts, sessions, keys) on its command line."""
    if names_state_folder((server.command, *server.args), workspace):
        raise McpServerError(
            f"MCP server {server.name!r} names the state folder {SPECWIRE_DIRNAME}/ "
            "on its command line: refused"
        )


async def _list_tools(session: ClientSession) -> list[McpTool]:
    from mcp.types import PaginatedRequestParams

    listed = await session.list_tools()
    tools = list(listed.tools)
    while listed.next_cursor is not None and len(tools) < MAX_TOOLS_PER_SERVER:
        listed = await session.list_tools(params=PaginatedRequestParams(cursor=listed.next_cursor))
        tools.extend(listed.tools)
    return tools[:MAX_TOOLS_PER_SERVER]


def _with_stderr(exc: BaseException, server: McpServer, stderr: TextIO | None) -> Exception:
    if isinstance(exc, McpServerError):
        return exc
    return McpServerError(
        f"MCP server {server.name!r} did not start: {_reason(exc)}{_stderr_note(stderr)}"
    )


def _stderr_note(stderr: TextIO | None) -> str:
    last = _last_line(stderr) if stderr is not None else ""
    return f" (its stderr: {last})" if last else ""


def _last_line(stderr: TextIO) -> str:
    with contextlib.suppress(OSError, ValueError):
        stderr.seek(0)
        lines = [line.strip() for line in stderr.read().splitlines() if line.strip()]
        return _one_line(lines[-1]) if lines else ""
    return ""


def _reason(exc: BaseException) -> str:
    if isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        return _reason(exc.exceptions[0])
    if isinstance(exc, TimeoutError):
        return "no answer in time"
    text = str(exc) or type(exc).__name__
    return _one_line(f"{type(exc).__name__}: {text}" if str(exc) else text)


def _one_line(text: str) -> str:
    return neutralize(redact(" ".join(text.split())))[:_REASON_CHARS]
