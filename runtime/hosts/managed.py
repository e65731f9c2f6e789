"""The managed host: a multi-tenant service; every turn runs fenced inside its tenant's root.

This release ships a local console adapter: each stdin line (or ``--message``) is
``<tenant-id>/<session-key>: <message>``. A tenant not declared in the spec gets a clear error
line and nothing runs. The tenant's root is ``<tenants root>/<tenant-id>``, where the tenants
root is ``$SPECWIRE_TENANTS_ROOT`` or ``<root or cwd>/.specwire/tenants``; every store and the
session logs (``<tenant root>/sessions/``) live under it. Each message calls
``build_turn(tenant, session id)`` (memory wired per turn, fenced to the tenant), runs one
single-turn loop seeded with the conversation so far, and prints ``<tenant>/<key>: <reply>``.

The tenants' token budgets are carried but not enforced yet: the loop does no token accounting.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Sequence
from pathlib import Path

from runtime.hosts.console import (
    message_option,
    parse_and_load,
    stderr_log,
    stdin_reader,
)
from runtime.hosts.turns import RefusedLine, RoutedLine, run_turn, serve_routed_lines
from runtime.hosts.types import ManagedTurnBuilder, TenantConfig
from runtime.ids import conversation_session_id
from runtime.loop import iter_messages
from runtime.paths import SPECWIRE_DIRNAME, StoreLayout
from runtime.secrets import SecretRef
from runtime.tenancy import Tenant, build_tenant

TENANTS_ROOT_ENV = "SPECWIRE_TENANTS_ROOT"
LINE_SHAPE = "<tenant-id>/<session-key>: <message>"


def tenants_root(root: Path | None) -> Path:
    configured = os.environ.get(TENANTS_ROOT_ENV, "").strip()
    if configured:
        return Path(configured).resolve()
    return ((root or Path.cwd()) / SPECWIRE_DIRNAME / "tenants").resolve()


def serve_managed(
    *,
    spec_name: str,
    model: str | SecretRef,
    instructions: str,
    tenants: Sequence[TenantConfig],
    build_turn: ManagedTurnBuilder,
    root: Path | None = None,
    argv: Sequence[str] | None = None,
) -> int:
    parser = argparse.ArgumentParser(
        prog=spec_name, description=f"Serve the {spec_name} agent for its tenants (console)."
    )
    message_option(parser, f'a line "{LINE_SHAPE}"')
    started = parse_and_load(parser, argv, model, spec_name)
    if isinstance(started, int):
        return started
    args, chosen = started
    base = tenants_root(root)
    known = [tenant.id for tenant in tenants]
    stderr_log(
        f"{spec_name} · managed on the local console · model {chosen.model_id} · "
        f"tenants: {', '.join(known) or 'none'} under {base} · send lines as {LINE_SHAPE}\n"
    )
    built: dict[str, Tenant] = {}

    def tenant_for(tenant_id: str) -> Tenant:
        if tenant_id not in built:
            tenant = build_tenant(tenant_id, base)
            tenant.workspace.mkdir(parents=True, exist_ok=True)
            built[tenant_id] = tenant
        return built[tenant_id]

    def handle(routed: RoutedLine) -> list[str]:
        tenant_id, _, key = routed.key.partition("/")
        if not tenant_id or not key:
            line = f"{routed.key}: {routed.message}"
            raise RefusedLine(f'{spec_name}: expected "{LINE_SHAPE}", got {line!r}')
        if tenant_id not in known:
            raise RefusedLine(
                f'{routed.key}: error: unknown tenant "{tenant_id}" (tenants: '
                f"{', '.join(known) or 'none'}); nothing was run"
            )
        tenant = tenant_for(tenant_id)
        session_id = conversation_session_id(spec_name, "managed", tenant_id, key)
        _, replies = run_turn(
            model=chosen,
            instructions=instructions,
            setup=build_turn(tenant, session_id),
            sessions_dir=StoreLayout(tenant.root, spec_name).sessions_dir,
            session_id=session_id,
            message=routed.message,
            spec_name=spec_name,
            target="managed",
            info={"tenant": tenant_id, "sessionKey": key},
            log=stderr_log,
        )
        return replies

    messages: list[str] = args.message
    return serve_routed_lines(
        iter_messages(messages if messages else stdin_reader()),
        spec_name=spec_name,
        line_shape=LINE_SHAPE,
        handle=handle,
    )
