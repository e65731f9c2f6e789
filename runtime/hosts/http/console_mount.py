"""The owner's memory console on ``agent.py serve``, at ``/console/``: off unless
``SPECWIRE_CONSOLE=1``.

It is the console ``codegen memory console`` starts (``runtime.console``), over the memory of
the directory the bundle serves from (a managed bundle: the one tenant
``SPECWIRE_CONSOLE_TENANT`` names, as ``codegen memory --tenant``), with the same login:
``SPECWIRE_CONSOLE_TOKEN``, or a token printed once at start. Every other path, and the
server's lifespan, go to the bundle's app unchanged. A bundle whose memory and state are in
PostgreSQL (``memory.backend: postgres`` with ``memory.state: postgres``) gets the console
``codegen memory console --backend postgres`` opens, on the bundle's ``memory.dsn``.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Collection
from pathlib import Path

from starlette.types import ASGIApp, Receive, Scope, Send

from specwire.runtime.core.errors import MemoryServiceError, ServeConfigError, StoreError
from specwire.runtime.core.fragment_data import FragmentData

ENABLE_ENV = "SPECWIRE_CONSOLE"
TENANT_ENV = "SPECWIRE_CONSOLE_TENANT"
PREFIX = "/console"


def console_enabled() -> bool:
    return os.environ.get(ENABLE_ENV, "").strip().lower() in ("1", "on", "true", "yes")


class ConsoleMounted:
    """``app`` with the console answering under ``/console``."""

    def __init__(self, app: ASGIApp, console: ASGIApp, close: Callable[[], None]) -> None:
        self.app = app
        self.console = console
        self.close = close

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "")
        if scope["type"] == "http" and (path == PREFIX or path.startswith(PREFIX + "/")):
            root = str(scope.get("root_path", "")) + PREFIX
            await self.console({**scope, "root_path": root}, receive, send)
            return
        await self.app(scope, receive, send)


def facts_backend_of(fragment: FragmentData | None) -> str | None:
    """A bundle's ``memory.backend`` (None without memory: the file store)."""
    memory = fragment.memory if fragment is not None else None
    return memory.backend if memory is not None else None


def state_dsn_of(fragment: FragmentData | None) -> str | None:
    """A bundle's ``memory.dsn`` (a ``$VARIABLE``) when its facts and state are both in
    PostgreSQL; None otherwise."""
    memory = fragment.memory if fragment is not None else None
    if memory is None or memory.backend != "postgres" or memory.state != "postgres":
        return None
    return memory.dsn


def with_console(
    app: ASGIApp,
    spec_name: str,
    root: Path,
    log: Callable[[str], None],
    *,
    tenants: Collection[str] | None = None,
    facts_backend: str | None = None,
    state_dsn: str | None = None,
) -> tuple[ASGIApp, Callable[[], None]]:
    """``app``, with the console mounted when ``SPECWIRE_CONSOLE`` asks for it; and what to
    call when the server stops. ``tenants``: a managed bundle's tenants (the console needs
    ``SPECWIRE_CONSOLE_TENANT``, one of them); ``facts_backend``: the bundle's
    ``memory.backend``; ``state_dsn``: its ``memory.dsn`` when facts and state are both in
    PostgreSQL (``state_dsn_of``), which the console then reads. Any other backend than the
    file store is refused (a file store beside such a bundle would be a stale copy)."""
    if not console_enabled():
        return app, lambda: None
    in_database = facts_backend == "postgres" and state_dsn is not None
    if facts_backend not in (None, "file") and not in_database:
        # A file store beside such a bundle is a stale copy: shown, and erased alone.
        raise ServeConfigError(
            f"{ENABLE_ENV}: the console on serve reads the file store, or facts and state "
            f"both in PostgreSQL, and this bundle keeps its facts in {facts_backend}: open it "
            f"with `codegen memory console --backend {facts_backend}`"
        )
    from specwire.runtime.console.app import console_app
    from specwire.runtime.console.auth import TOKEN_ENV, ConsoleAuth, TokenError, new_token
    from specwire.runtime.console.data import BackendOptions, ConsoleData
    from specwire.runtime.owner.selection import SelectionError, select, select_remote

    tenant = os.environ.get(TENANT_ENV, "").strip() or None
    if tenants is not None and (tenant is None or tenant not in tenants):
        raise ServeConfigError(
            f"{ENABLE_ENV}: a managed bundle's console is opened for one of its tenants: "
            f"set {TENANT_ENV} ({', '.join(sorted(tenants)) or 'none'})"
        )
    if tenants is None and tenant is not None:
        raise ServeConfigError(f"{TENANT_ENV}: this bundle has no tenants")
    configured = os.environ.get(TOKEN_ENV)
    token = configured or new_token()
    try:
        auth = ConsoleAuth(token)
        if in_database:
            data = ConsoleData(
                select_remote(root, spec_name, tenant, None),
                BackendOptions(backend="postgres", dsn=state_dsn, tenant=tenant),
            )
        else:
            data = ConsoleData(select(root, spec_name, tenant, None), BackendOptions(tenant=tenant))
        data.open()
    except (TokenError, SelectionError, StoreError, MemoryServiceError, ValueError, OSError) as exc:
        raise ServeConfigError(f"{ENABLE_ENV}: {exc}") from None
    if not configured:
        log(f"memory console at {PREFIX}/ · owner token (shown once): {token}\n")
    return ConsoleMounted(app, console_app(data, auth), data.close), data.close
