"""Serve the console with uvicorn until Ctrl-C (the socket bound first, so the line printed
names the real port; ``--port 0`` picks a free one)."""

from __future__ import annotations

import socket
import sys

from starlette.types import ASGIApp


def serve(app: ASGIApp, host: str, port: int, where: str) -> int:
    import uvicorn

    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
        sock.listen(128)
    except OSError as exc:
        sock.close()
        raise OSError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    bound = sock.getsockname()[1]
    shown = f"[{host}]" if family == socket.AF_INET6 else host
    sys.stderr.write(f"memory console ({where}) · http://{shown}:{bound}/\n")
    sys.stderr.flush()
    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off")
    uvicorn.Server(config).run(sockets=[sock])
    return 0
