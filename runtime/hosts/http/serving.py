"""What the per-turn hosts share on the command line: ``console`` / ``serve`` and the server.

``agent.py`` with no command (or ``agent.py console``) runs the console adapter, as before;
``agent.py serve`` starts the HTTP host. The HTTP parts (Starlette, uvicorn, slack_sdk) are the
``specwire[serve]`` extra and are imported only by ``serve``.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import socket
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

from specwire.runtime.core.errors import ServeConfigError
from specwire.runtime.hosts.console import message_option, parse_argv, stderr_log
from specwire.runtime.hosts.http import DRAIN_S
from specwire.runtime.hosts.http.connections import (
    MAX_CONNECTIONS,
    guarded_protocol_class,
    raise_open_file_limit,
)

if TYPE_CHECKING:
    from starlette.types import ASGIApp

SERVE_EXTRA_MODULES = ("starlette", "uvicorn", "slack_sdk")


def per_turn_argv(
    parser: argparse.ArgumentParser,
    argv: Sequence[str] | None,
    *,
    console_help: str,
    line_what: str,
    serve_help: str,
) -> argparse.Namespace | int:
    """Parse ``[console] [-m TEXT]...`` or ``serve [--host H] [--port P]``."""
    from specwire.runtime.hosts.http.options import listen_options

    message_option(parser, line_what)
    commands = parser.add_subparsers(dest="command", metavar="{serve,console}")
    serve = commands.add_parser("serve", help=serve_help, description=serve_help)
    listen_options(serve)
    console = commands.add_parser("console", help=console_help, description=console_help)
    message_option(console, line_what)
    return parse_argv(parser, argv)


def check_serve_extra(prog: str) -> bool:
    missing = [name for name in SERVE_EXTRA_MODULES if importlib.util.find_spec(name) is None]
    if missing:
        stderr_log(f"{prog}: `serve` needs {', '.join(missing)}: pip install 'specwire[serve]'\n")
        return False
    return True


def run_server(app: ASGIApp, host: str, port: int, banner: str) -> int:
    """Serve ``app`` until SIGINT/SIGTERM (then finish the requests in flight). The caller owns
    what the turns borrow (``runtime.hosts.resources``) and closes it after this returns. The
    listening socket is bound first so the banner names the real port (``--port 0`` picks a
    free one). Slow clients are cut off by a header deadline and reaped at the connection
    limit (``runtime.hosts.http.connections``)."""
    import uvicorn

    _GracefulServer = _graceful_server_class()

    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # IPPROTO_TCP spelt out: asyncio turns Nagle off (TCP_NODELAY) only on sockets whose proto
    # says TCP, and with Nagle on every keep-alive response waits ~40 ms for a delayed ACK.
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
        sock.listen(2048)  # from now on connections queue until the server accepts them
    except OSError as exc:
        sock.close()
        raise ServeConfigError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    bound_port = sock.getsockname()[1]
    shown_host = f"[{host}]" if family == socket.AF_INET6 else host
    stderr_log(f"{banner} · listening on http://{shown_host}:{bound_port}\n")
    config = uvicorn.Config(
        app,
        log_level="warning",
        access_log=False,
        lifespan="on",
        timeout_graceful_shutdown=int(DRAIN_S),  # requests in flight
        limit_concurrency=MAX_CONNECTIONS,
        http=guarded_protocol_class(max_connections=MAX_CONNECTIONS),
    )
    raise_open_file_limit(MAX_CONNECTIONS)
    _GracefulServer(config).run(sockets=[sock])
    stderr_log("stopped\n")
    return 0


def _graceful_server_class() -> type[Any]:
    import uvicorn

    class GracefulServer(uvicorn.Server):
        """A SIGINT/SIGTERM ends the server gracefully and the process normally (exit 0, so the
        host closes its stores); uvicorn would re-raise the signal and kill the process at once."""

        @contextlib.contextmanager
        def capture_signals(self) -> Iterator[None]:
            with super().capture_signals():
                yield
                captured = getattr(self, "_captured_signals", None)
                if isinstance(captured, list):
                    captured.clear()

    return GracefulServer
