"""The managed host: a multi-tenant service; every turn runs fenced inside its tenant's root.

``agent.py serve`` is an OpenAI-compatible HTTP service (``runtime.hosts.http.managed_app``): each
tenant calls it with its own API key, within its token budget. ``agent.py`` or
``agent.py console`` is the local console adapter: each stdin line (or ``--message``) is
``<tenant-id>/<session-key>: <message>``; a tenant not declared in the spec gets a clear error
line and nothing runs.

The tenant's root is ``<tenants root>/<tenant-id>``, where the tenants root is
``$SPECWIRE_TENANTS_ROOT`` or ``<root or cwd>/.specwire/tenants``; every store, the session logs
(``<tenant root>/sessions/``) and the usage ledger (``<tenant root>/usage/``) live under it.
Each message calls ``build_turn(tenant, session id, resources, audience)`` (memory wired per
turn, fenced to the tenant, borrowing the tenant's fact store from the host's pool:
``runtime.hosts.resources``) and runs one single-turn loop seeded with the conversation so far.
The audience is the request's ``user`` field (a private conversation with that person) and the
session: with ``memory.scope`` a user's facts are theirs alone, a session's facts that session's.
Token budgets are enforced by ``serve`` from the recorded usage; the console adapter records
usage too. A tenant's scheduled dream records its model phase's calls, tokens and cost in the
same ledger as a kind of its own, outside the turn budget (``record_dream``). The spec's MCP
tool servers (``mcp_servers``, ``thredz``) start before the banner, one instance of each per
tenant working in that tenant's workspace (``runtime.hosts.tool_servers``).

With ``memory.state: postgres`` the session logs, the conversation lock and the usage ledgers
are in the spec's database (``runtime.sessions.postgres``, ``runtime.hosts.http.usage_postgres``)
instead of the tenant's root: any number of ``serve`` processes on any hosts serve the same
tenants, a conversation's turns hopping between them.
"""

from __future__ import annotations

import argparse
import os
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from specwire.runtime.core.errors import ServeConfigError, StoreError
from specwire.runtime.core.fragment import TENANTS_ROOT_ENV, tenant_key_variable
from specwire.runtime.core.fragment_data import FragmentData
from specwire.runtime.core.ids import conversation_session_id
from specwire.runtime.core.paths import SPECWIRE_DIRNAME, StoreLayout
from specwire.runtime.core.scopes import Audience
from specwire.runtime.core.tenancy import Tenant, build_tenant
from specwire.runtime.hosts.console import load_model, stderr_log, stdin_reader
from specwire.runtime.hosts.http.serving import check_serve_extra, per_turn_argv, run_server
from specwire.runtime.hosts.preflight import StartCheck, bundle_fragment, passes_start_checks
from specwire.runtime.hosts.resources import host_resources
from specwire.runtime.hosts.tool_servers import HostToolServers, host_tool_servers
from specwire.runtime.hosts.turns import RefusedLine, RoutedLine, run_turn, serve_routed_lines
from specwire.runtime.hosts.types import (
    ManagedTurnBuilder,
    TenantConfig,
    TurnSetup,
    build_with_audience,
    takes_audience,
)
from specwire.runtime.loop import LoopResult, iter_messages
from specwire.runtime.models import Model
from specwire.runtime.models.streaming import StreamSink
from specwire.runtime.safety.secrets import SecretRef
from specwire.runtime.sessions.store import FileSessionLogs, SessionLogs
from specwire.runtime.wiring import (
    HostResources,
    parse_fragment,
    session_logs_for,
    state_in_database,
)

if TYPE_CHECKING:
    from specwire.runtime.dream.model_phase import ModelSession
    from specwire.runtime.dream.outcome import ModelPhase
    from specwire.runtime.hosts.heartbeat import Heartbeat
    from specwire.runtime.hosts.http.usage_ledger import Ledger
    from specwire.runtime.hosts.http.usage_postgres import WorkerLease

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
    memory: Mapping[str, Any] | None = None,
    mcp_servers: Mapping[str, Mapping[str, Any]] | None = None,
) -> int:
    parser = argparse.ArgumentParser(
        prog=spec_name, description=f"The {spec_name} agent, serving its tenants."
    )
    args = per_turn_argv(
        parser,
        argv,
        console_help="answer lines typed on the console (the default)",
        line_what=f'a line "{LINE_SHAPE}"',
        serve_help="serve the OpenAI-compatible chat completions API over HTTP",
    )
    if isinstance(args, int):
        return args
    if args.command == "serve" and not check_serve_extra(spec_name):
        return 2
    check = StartCheck(
        spec_name,
        (("agent.model", model),),
        bundle_fragment(memory, build_turn),
        tenants=tuple(tenant.id for tenant in tenants),
        cwd=root,
    )
    if not passes_start_checks(check, stderr_log):
        return 2
    chosen = load_model(model, spec_name)
    if chosen is None:
        return 2
    fragment = check.memory
    parsed = parse_fragment(fragment) if fragment is not None else None
    with host_resources() as resources:  # each tenant's fact store (and recall index) across turns
        agent = _TenantAgent(spec_name, chosen, instructions, tenants, build_turn, root, resources)
        agent.fragment = parsed
        # One instance of each server per tenant, in its workspace: none is shared by tenants.
        agent.servers = host_tool_servers(mcp_servers, fragment, stderr_log)
        heartbeat = _heartbeat(agent)
        try:
            if agent.servers is not None:
                for tenant in tenants:
                    agent.servers.start(tenant.id, agent.tenant(tenant.id).workspace)
            if args.command == "serve":
                return _serve_http(agent, args)
            return _serve_console(agent, args)
        finally:
            if heartbeat is not None:
                heartbeat.stop()
            agent.close()


def _heartbeat(agent: _TenantAgent) -> Heartbeat | None:
    """The spec's heartbeat (``learning.study.on_heartbeat``): each tick studies for every
    tenant this process has served, in that tenant's root and workspace."""
    fragment = agent.fragment
    if fragment is None or fragment.learning is None or not fragment.learning.study_on_heartbeat:
        return None
    from specwire.runtime.hosts.heartbeat import StudyPlace, start_study_heartbeat

    def places() -> list[StudyPlace]:
        servers = agent.servers  # with learning into Thredz's wiki: the tenant's instance
        return [
            StudyPlace(
                tenant.workspace,
                tenant,
                study=servers.study_pass(tenant.id) if servers is not None else None,
            )
            for tenant in agent.served_tenants()
        ]

    return start_study_heartbeat(fragment, places, stderr_log)


class _TenantAgent:
    """One turn of one tenant's session, whichever adapter delivered the message."""

    def __init__(
        self,
        spec_name: str,
        model: Model,
        instructions: str,
        tenants: Sequence[TenantConfig],
        build_turn: ManagedTurnBuilder,
        root: Path | None,
        resources: HostResources,
    ) -> None:
        self.spec_name = spec_name
        self.model = model
        self.instructions = instructions
        self.tenants = {tenant.id: tenant for tenant in tenants}
        self.build_turn = build_turn
        self.takes_audience = takes_audience(build_turn)
        self.resources = resources
        self.base = tenants_root(root)
        self._built: dict[str, Tenant] = {}
        self._lock = threading.Lock()
        # The bundle's memory fragment: where the session logs and usage ledgers live.
        self.fragment: FragmentData | None = None
        # With the usage ledgers in the database: this process, as reservations name it.
        self._lease: WorkerLease | None = None
        # The spec's MCP tool servers, one instance per tenant (``runtime.hosts.tool_servers``).
        self.servers: HostToolServers | None = None
        # Each tenant's dream model session (``dream_session``).
        self._dream_sessions: dict[str, ModelSession] = {}

    def dream_session(self, tenant: Tenant) -> ModelSession | None:
        """The model session a tenant's scheduled dream runs ``mode: full`` in: the turns'
        model over that tenant's memory, fenced to its root as its turns are; the budget is
        per run of the tenant's own window, its record the tenant's dream state."""
        if self.fragment is None:
            return None
        with self._lock:
            if tenant.id not in self._dream_sessions:
                from specwire.runtime.hosts.dream_session import memory_session, metered

                session = memory_session(
                    self.fragment, self.model, cwd=tenant.workspace, tenant=tenant, log=stderr_log
                )
                self._dream_sessions[tenant.id] = metered(
                    session, lambda phase: self.record_dream(tenant.id, phase)
                )
            return self._dream_sessions[tenant.id]

    def record_dream(self, tenant_id: str, phase: ModelPhase) -> None:
        """A tenant's dream model phase, in its usage ledger as the dream's kind (never counted
        against its turn budget: ``runtime.hosts.http.usage_ledger``). A ledger that cannot
        take it is said on stderr: the dream already ran, its record keeps the spend."""
        from specwire.runtime.hosts.dream_session import dream_usage

        usage = dream_usage(phase)
        if usage is None:
            return
        try:
            self.ledger(tenant_id).add_dream(usage)
        except (StoreError, OSError) as exc:
            stderr_log(
                f"[dream] tenant {tenant_id}: the model phase's usage is not in the usage "
                f"ledger: {exc}\n"
            )

    def close(self) -> None:
        if self.servers is not None:
            self.servers.close()
        if self._lease is not None:
            self._lease.close()

    def in_database(self) -> bool:
        return self.fragment is not None and state_in_database(self.fragment)

    def session_logs(self, tenant: Tenant) -> SessionLogs:
        sessions_dir = StoreLayout(tenant.root, self.spec_name).sessions_dir
        if self.fragment is None:
            return FileSessionLogs(sessions_dir)
        return session_logs_for(self.fragment, tenant, sessions_dir, self.resources.clock)

    def ledger(self, tenant_id: str) -> Ledger:
        """The tenant's usage ledger: in the database with ``memory.state: postgres``, else a
        file under the tenant's root."""
        from specwire.runtime.hosts.http.usage_ledger import UsageLedger

        if self.fragment is not None and self.fragment.memory is not None and self.in_database():
            from specwire.runtime.facts.providers.connect import shared_postgres_pool
            from specwire.runtime.hosts.http.usage_postgres import (
                PostgresUsageLedger,
                WorkerLease,
            )

            pool = shared_postgres_pool(self.fragment.memory)
            with self._lock:
                if self._lease is None:
                    self._lease = WorkerLease(pool)
            return PostgresUsageLedger(
                pool, tenant=tenant_id, spec=self.spec_name, lease=self._lease
            )
        return UsageLedger(self.tenant(tenant_id).root, self.spec_name)

    def served_tenants(self) -> list[Tenant]:
        """The tenants this process has served so far, by id."""
        with self._lock:
            return [self._built[key] for key in sorted(self._built)]

    def tenant(self, tenant_id: str) -> Tenant:
        with self._lock:
            if tenant_id not in self._built:
                tenant = build_tenant(tenant_id, self.base)
                tenant.workspace.mkdir(parents=True, exist_ok=True)
                self._built[tenant_id] = tenant
            return self._built[tenant_id]

    def answer(
        self,
        tenant_id: str,
        key: str,
        message: str,
        timings: dict[str, float] | None = None,
        user: str | None = None,
        stream: StreamSink | None = None,
    ) -> tuple[LoopResult, list[str]]:
        """Run the turn; ``timings`` receives milliseconds spent wiring and in the turn;
        ``user`` is the request's ``user`` field (whose memory it is); ``stream`` receives the
        answer as it is written."""
        if tenant_id not in self.tenants:
            raise ValueError(f"unknown tenant {tenant_id!r}")
        tenant = self.tenant(tenant_id)
        conversation = managed_conversation(key, user)
        session_id = conversation_session_id(self.spec_name, "managed", tenant_id, conversation)
        # A managed request is one person's conversation with the agent: private.
        audience = Audience(user=user, conversation=conversation, private=True)
        started = time.perf_counter()
        setup = build_with_audience(
            self.build_turn, self.takes_audience, audience, tenant, session_id, self.resources
        )
        if self.servers is not None:
            setup = self.servers.extend(setup, tenant_id)
        wired = time.perf_counter()
        try:
            return self._run(tenant, tenant_id, key, session_id, message, setup, stream)
        finally:
            if timings is not None:
                timings["wire"] = (wired - started) * 1000
                timings["turn"] = (time.perf_counter() - wired) * 1000

    def _run(
        self,
        tenant: Tenant,
        tenant_id: str,
        key: str,
        session_id: str,
        message: str,
        setup: TurnSetup,
        stream: StreamSink | None,
    ) -> tuple[LoopResult, list[str]]:
        return run_turn(
            model=self.model,
            instructions=self.instructions,
            setup=setup,
            sessions_dir=None,
            logs=self.session_logs(tenant),
            session_id=session_id,
            message=message,
            spec_name=self.spec_name,
            target="managed",
            info={"tenant": tenant_id, "sessionKey": key},
            log=stderr_log,
            stream=stream,
            dream_session=lambda: self.dream_session(tenant),
        )


def managed_conversation(key: str, user: str | None) -> str:
    """The conversation a request continues: its session key, and with a ``user`` that
    person's own conversation under that key (``<user>/<key>``; ``/`` is never in a client key,
    so no other user's, and no anonymous, key can name it). ``X-Session-Id`` is the client's
    string: another user sending it must not read this person's history, nor the facts
    recalled into it, nor the conversation's facts."""
    return key if user is None else f"{user}/{key}"


def _serve_console(agent: _TenantAgent, args: argparse.Namespace) -> int:
    known = list(agent.tenants)
    stderr_log(
        f"{agent.spec_name} · managed on the local console · model {agent.model.model_id} · "
        f"tenants: {', '.join(known) or 'none'} under {agent.base} · send lines as "
        f"{LINE_SHAPE}\n"
    )

    def handle(routed: RoutedLine) -> list[str]:
        tenant_id, _, key = routed.key.partition("/")
        if not tenant_id or not key:
            line = f"{routed.key}: {routed.message}"
            raise RefusedLine(f'{agent.spec_name}: expected "{LINE_SHAPE}", got {line!r}')
        if tenant_id not in agent.tenants:
            raise RefusedLine(
                f'{routed.key}: error: unknown tenant "{tenant_id}" (tenants: '
                f"{', '.join(known) or 'none'}); nothing was run"
            )
        result, replies = agent.answer(tenant_id, key, routed.message)
        if result.usage is not None:
            agent.ledger(tenant_id).add(result.usage)
        return replies

    messages: list[str] = args.message
    return serve_routed_lines(
        iter_messages(messages if messages else stdin_reader()),
        spec_name=agent.spec_name,
        line_shape=LINE_SHAPE,
        handle=handle,
    )


def _serve_http(agent: _TenantAgent, args: argparse.Namespace) -> int:
    from specwire.runtime.hosts.http.common import max_body_bytes
    from specwire.runtime.hosts.http.managed_app import (
        ManagedReply,
        ManagedService,
        build_managed_app,
    )
    from specwire.runtime.hosts.http.options import listen_address
    from specwire.runtime.hosts.http.tenant_keys import load_tenant_keys

    try:
        host, port = listen_address(args)
        limit = max_body_bytes()
    except ValueError as exc:
        raise ServeConfigError(str(exc)) from None
    keys, keyless = load_tenant_keys(list(agent.tenants))
    for tenant_id in keyless:
        stderr_log(
            f"{agent.spec_name}: tenant {tenant_id!r} has no API key "
            f"(${tenant_key_variable(tenant_id)} is not set): its calls get 401\n"
        )
    ledgers: dict[str, Ledger] = {}
    ledgers_lock = threading.Lock()

    def ledger_for(tenant_id: str) -> Ledger:
        with ledgers_lock:
            if tenant_id not in ledgers:
                ledgers[tenant_id] = agent.ledger(tenant_id)
            return ledgers[tenant_id]

    def turn(
        tenant_id: str, key: str, message: str, user: str | None, stream: StreamSink | None
    ) -> ManagedReply:
        timings: dict[str, float] = {}
        result, replies = agent.answer(tenant_id, key, message, timings, user, stream)
        return ManagedReply(result.session_id, replies, result.usage, timings)

    service = ManagedService(
        spec_name=agent.spec_name,
        keys=keys,
        tenants=agent.tenants,
        run_turn=turn,
        ledger_for=ledger_for,
        max_body=limit,
        log=stderr_log,
    )
    banner = (
        f"{agent.spec_name} · managed (OpenAI-compatible) · model {agent.model.model_id} · "
        f"{len(keys.digests)} of {len(agent.tenants)} tenant(s) with a key under {agent.base} · "
        "POST /v1/chat/completions, GET /v1/models, GET /healthz"
    )
    from specwire.runtime.hosts.http.console_mount import (
        facts_backend_of,
        state_dsn_of,
        with_console,
    )

    app, close_console = with_console(
        build_managed_app(service),
        agent.spec_name,
        Path.cwd(),
        stderr_log,
        tenants=list(agent.tenants),
        facts_backend=facts_backend_of(agent.fragment),
        state_dsn=state_dsn_of(agent.fragment),
    )
    try:
        return run_server(app, host, port, banner)
    finally:
        close_console()
