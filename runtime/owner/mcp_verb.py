"""``codegen memory mcp``: an agent's memory as an MCP server (the official ``mcp`` SDK).

    codegen memory [--root DIR] [--tenant ID] [--session SESS] mcp --bundle AGENT_PY
        [--user ID | --conversation ID | --role NAME] [--allow-writes]
        [--transport stdio | http [--port N] [--token-env VAR]]

The tools are the bundle's memory tools (``runtime.owner.mcp_toolset``) for the audience the
scope flags name (none: the agent's own memory only). Over HTTP the server binds 127.0.0.1 and
every request needs ``Authorization: Bearer <token>``: the token is read from ``--token-env``'s
variable, or generated and printed once on stderr. Exit status: 0 stopped, 2 an error.
"""

from __future__ import annotations

import argparse
import hmac
import os
import secrets
import socket
import sys
from collections.abc import Awaitable, Callable, Mapping, MutableMapping
from pathlib import Path
from typing import Any

from specwire.runtime.core.scopes import Audience, ScopeError
from specwire.runtime.core.tenancy import build_tenant
from specwire.runtime.owner.backend import DEFAULT_DSN, DEFAULT_TOKEN
from specwire.runtime.owner.bundle_fragment import read_bundle_fragment
from specwire.runtime.owner.mcp_toolset import MemoryToolset
from specwire.runtime.owner.selection import SelectionError, state_root

SERVER_NAME = "specwire-memory"
MIN_TOKEN_CHARS = 16

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--bundle", type=Path, required=True, help="the agent's agent.py (or its folder)"
    )
    subject = parser.add_mutually_exclusive_group()
    subject.add_argument("--user", metavar="ID", help="serve as this person's private chat")
    subject.add_argument("--conversation", metavar="ID", help="serve as this conversation")
    subject.add_argument("--role", metavar="NAME", help="serve as this crew role")
    parser.add_argument(
        "--allow-writes",
        action="store_true",
        help="also serve the tools that change memory (default: read-only)",
    )
    parser.add_argument("--transport", choices=("stdio", "http"), default="stdio")
    parser.add_argument("--port", type=int, default=8765, help="http: the port on 127.0.0.1")
    parser.add_argument(
        "--token-env",
        metavar="VAR",
        help="http: the environment variable holding the bearer token (default: generate one)",
    )


def run(args: argparse.Namespace) -> int:
    defaults = {"backend": "file", "dsn": DEFAULT_DSN, "url": None, "token": DEFAULT_TOKEN}
    if any(getattr(args, flag, value) != value for flag, value in defaults.items()):
        raise SelectionError(
            "mcp serves the memory the bundle's spec names (its backend and its secrets, read "
            "from the environment as the bundle reads them): drop --backend/--dsn/--url/--token"
        )
    fragment = read_bundle_fragment(args.bundle)
    state = state_root(args.root, args.tenant)  # it must exist: the agent ran there
    continuity = fragment.get("continuity")
    per_session = isinstance(continuity, Mapping) and continuity.get("scope") == "session"
    if per_session and args.session is None:
        raise SelectionError(
            "this bundle keeps focus, plans and goals per conversation (continuity scope "
            "session): pass --session sess_… to serve one conversation's (the file names "
            "under .specwire/sessions/)"
        )
    per_person = isinstance(continuity, Mapping) and continuity.get("scope") == "audience"
    if per_person and args.user is None and args.conversation is None:
        raise SelectionError(
            "this bundle keeps focus, plans and goals per person (continuity scope audience): "
            "pass --user ID to serve that person's (the request's `user`), or --conversation "
            "ID for an anonymous session's (its X-Session-Id)"
        )
    tenant = None if args.tenant is None else build_tenant(args.tenant, state.parent)
    try:
        import mcp.server.lowlevel  # noqa: F401
    except ImportError:
        raise SelectionError(
            "the MCP server needs the mcp SDK: pip install 'specwire[mcp]'"
        ) from None
    token = _token(args) if args.transport == "http" else None
    port = _check_port(args.port) if args.transport == "http" else 0
    toolset = MemoryToolset(
        fragment,
        cwd=args.root.resolve(),
        tenant=tenant,
        audience=_audience(args),
        session=args.session,
        allow_writes=args.allow_writes,
    )
    try:
        server = build_server(toolset)
        if token is None:
            import anyio

            anyio.run(_serve_stdio, server)
        else:
            _serve_http(server, token, port)
    finally:
        toolset.close()
    return 0


def _audience(args: argparse.Namespace) -> Audience:
    try:
        if args.user is not None:
            return Audience(user=args.user, private=True)
        if args.conversation is not None:
            return Audience(conversation=args.conversation)
        if args.role is not None:
            return Audience(role=args.role, crew=True)
    except ScopeError as exc:
        raise SelectionError(str(exc)) from None
    return Audience()


def _token(args: argparse.Namespace) -> str:
    if args.token_env is None:
        token = secrets.token_urlsafe(32)
        sys.stderr.write(f"{SERVER_NAME}: bearer token (this run only): {token}\n")
        return token
    value = os.environ.get(args.token_env, "")
    if len(value) < MIN_TOKEN_CHARS:
        raise SelectionError(
            f"--token-env {args.token_env}: the variable must hold a token of at least "
            f"{MIN_TOKEN_CHARS} characters"
        )
    return value


def _check_port(port: int) -> int:
    if not 0 <= port <= 65535:
        raise SelectionError(f"--port {port}: a port is 0..65535")
    return port


def build_server(toolset: MemoryToolset) -> Any:
    """The SDK's low-level server over ``toolset``: list and call, nothing else."""
    import anyio.to_thread
    import mcp.types as types
    from mcp.server.lowlevel import Server

    listing = toolset.listing()
    tools = [
        types.Tool(
            name=tool.name,
            description=tool.description,
            input_schema=tool.input_schema,
            annotations=types.ToolAnnotations(read_only_hint=not tool.writes),
        )
        for tool in listing
    ]

    async def list_tools(ctx: Any, params: Any) -> Any:
        return types.ListToolsResult(tools=tools)

    async def call_tool(ctx: Any, params: Any) -> Any:
        outcome = await anyio.to_thread.run_sync(
            toolset.call, params.name, dict(params.arguments or {})
        )
        return types.CallToolResult(
            content=[types.TextContent(text=outcome.text)], is_error=outcome.is_error
        )

    return Server(SERVER_NAME, on_list_tools=list_tools, on_call_tool=call_tool)


async def _serve_stdio(server: Any) -> None:
    from mcp.server.stdio import stdio_server

    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


def require_bearer(app: ASGIApp, token: str) -> ASGIApp:
    """``app`` behind a bearer token: anything else gets 401 (compared in constant time)."""
    expected = f"Bearer {token}".encode()

    async def guarded(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            given = dict(scope.get("headers") or ()).get(b"authorization", b"")
            if not hmac.compare_digest(given, expected):
                await send(
                    {
                        "type": "http.response.start",
                        "status": 401,
                        "headers": [
                            (b"content-type", b"text/plain"),
                            (b"www-authenticate", b"Bearer"),
                        ],
                    }
                )
                await send({"type": "http.response.body", "body": b"unauthorized\n"})
                return
        await app(scope, receive, send)

    return guarded


def _serve_http(server: Any, token: str, port: int) -> None:
    import uvicorn

    app = require_bearer(server.streamable_http_app(host="127.0.0.1"), token)
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        listener.bind(("127.0.0.1", port))
    except OSError as exc:
        listener.close()
        raise SelectionError(
            f"--port {port}: cannot listen on 127.0.0.1 ({exc.strerror})"
        ) from None
    # Listening before the line is printed: a client that reads it may connect at once (the
    # kernel queues it until uvicorn accepts); a bound socket that is not listening refuses.
    listener.listen(128)
    bound = listener.getsockname()[1]
    sys.stderr.write(f"{SERVER_NAME}: serving http://127.0.0.1:{bound}/mcp\n")
    sys.stderr.flush()
    config = uvicorn.Config(app, log_level="warning", lifespan="on")
    uvicorn.Server(config).run(sockets=[listener])
