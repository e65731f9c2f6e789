"""``agent.py serve``'s command-line options, without the HTTP stack (the console path and
``--help`` must work without the ``serve`` extra)."""

from __future__ import annotations

import argparse
import os
import re

from specwire.runtime.core.fragment import SERVE_HOST_ENV as HOST_ENV
from specwire.runtime.core.fragment import SERVE_PORT_ENV as PORT_ENV

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8000
# Plain ASCII digits: str.isdigit() also accepts "²", which int() refuses.
DIGITS = re.compile(r"[0-9]{1,18}")


def listen_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--host",
        default=None,
        help=f"interface to listen on (default: ${HOST_ENV} or {DEFAULT_HOST})",
    )
    parser.add_argument(
        "--port",
        type=int,
        default=None,
        help=f"port to listen on (default: ${PORT_ENV} or {DEFAULT_PORT}; 0 picks a free one)",
    )


def listen_address(args: argparse.Namespace) -> tuple[str, int]:
    host = args.host or os.environ.get(HOST_ENV, "").strip() or DEFAULT_HOST
    if args.port is not None:
        port = args.port
    else:
        raw = os.environ.get(PORT_ENV, "").strip()
        if raw and not DIGITS.fullmatch(raw):
            raise ValueError(f"${PORT_ENV} must be a port number (got {raw!r})")
        port = int(raw) if raw else DEFAULT_PORT
    if not 0 <= port <= 65535:
        raise ValueError(f"the port must be between 0 and 65535 (got {port})")
    return host, port
