"""``codegen memory``, with the ``console`` verb: the owner's command table assembled here, one
layer above ``runtime.owner`` (which the console reads through), so no layer imports upward.

    codegen memory [--root DIR] [--spec NAME] [--tenant ID] [--backend …] console
                   [--host 127.0.0.1] [--port 8765] [--evals DIR] [--embedder ID]

The owner token is ``$SPECWIRE_CONSOLE_TOKEN`` or, when that is unset, a new one printed once
on stderr (never written to a file). The HTTP parts are the ``serve`` extra, imported only by
this verb.
"""

from __future__ import annotations

import argparse
import importlib.util
import ipaddress
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from specwire.runtime.owner import command as owner_command
from specwire.runtime.owner.backend import is_remote, remote_spec
from specwire.runtime.owner.database_tenancy import database_spec
from specwire.runtime.owner.selection import SelectionError, select, select_remote

DEFAULT_PORT = 8765
NEEDS = ("starlette", "uvicorn")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default: 127.0.0.1)")
    parser.add_argument(
        "--port",
        type=int,
        default=DEFAULT_PORT,
        help=f"port (default: {DEFAULT_PORT}; 0 picks one)",
    )
    parser.add_argument(
        "--evals",
        type=Path,
        default=None,
        help="a folder of `codegen eval --json` outputs (default: <state>/evals)",
    )
    parser.add_argument(
        "--embedder",
        default=None,
        help="rank searches with this embedder (default: the one the agent's recall uses; "
        "none: BM25 only)",
    )
    parser.add_argument(
        "--allow-remote-bind",
        action="store_true",
        help="allow --host to be an address other than loopback (put TLS in front of it)",
    )


def run(args: argparse.Namespace) -> int:
    missing = [name for name in NEEDS if importlib.util.find_spec(name) is None]
    if missing:
        raise SelectionError(f"console needs {', '.join(missing)}: pip install 'specwire[serve]'")
    if not _loopback(args.host) and not args.allow_remote_bind:
        raise SelectionError(
            f"--host {args.host}: the console binds loopback only unless --allow-remote-bind"
        )
    if not 0 <= args.port <= 65535:
        raise SelectionError(f"--port {args.port}: between 0 and 65535")
    from specwire.runtime.console.auth import TOKEN_ENV, ConsoleAuth, TokenError, new_token
    from specwire.runtime.console.data import BackendOptions, ConsoleData

    configured = os.environ.get(TOKEN_ENV)
    token = configured if configured else new_token()
    try:
        auth = ConsoleAuth(token)
    except TokenError as exc:
        raise SelectionError(str(exc)) from None
    if args.backend == "postgres":
        # Nothing under --root: the database says which tenants and specs exist.
        spec = database_spec(args.dsn, args.tenant, args.spec)
        selection = select_remote(args.root, spec, args.tenant, args.session)
    elif is_remote(args):
        spec = remote_spec(args.root, args.spec, args.tenant)
        selection = select_remote(args.root, spec, args.tenant, args.session)
    else:
        selection = select(args.root, args.spec, args.tenant, args.session)
    data = ConsoleData(
        selection,
        BackendOptions(
            backend=args.backend,
            dsn=args.dsn,
            url=args.url,
            token=args.token,
            tenant=args.tenant,
            embedder=args.embedder,
        ),
    )
    data.open()
    try:
        from specwire.runtime.console.app import console_app
        from specwire.runtime.console.serving import serve

        if not configured:
            sys.stderr.write(f"owner token (shown once): {token}\n")
        return serve(
            console_app(data, auth, evals_dir=args.evals), args.host, args.port, data.where
        )
    finally:
        data.close()


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


CONSOLE_VERB = owner_command.ExtraVerb(
    name="console",
    help="a local web console over this memory (127.0.0.1, owner token, read and review)",
    add_arguments=add_arguments,
    run=run,
)


def main(argv: Sequence[str] | None = None) -> int:
    return owner_command.main(argv, extra=(CONSOLE_VERB,))


def cli() -> None:
    raise SystemExit(main())
