"""The fact provider a spec's ``memory.backend`` names, connected for one tenant's spec.

``file`` is the embedded store (``runtime.facts.wiring`` opens it); this module connects the
two remote backends from the fragment's references, resolved from the environment here and
never logged:

- ``postgres``: ``dsn: $DATABASE_URL``. One connection pool per DSN per process, shared by every
  tenant and spec the process serves and closed at exit; the schema is migrated once per pool.
  Scope: the tenant's id (``single.tenant`` on targets without tenants), the spec's name, no session
  (facts are the spec's shared memory, as in the local store).
- ``http``: ``url`` (a URL or ``$MEMORY_URL``) and ``token: $MEMORY_TOKEN``. On the managed target
  each tenant has its own token, read from ``<TOKEN>_<TENANT ID>`` (``$MEMORY_TOKEN`` and tenant
  ``acme-eu`` → ``MEMORY_TOKEN_ACME_EU``), and every request claims that tenant: the memory
  service refuses it unless the token is that tenant's, so a misconfigured fleet fails closed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from specwire.runtime.core.clock import Clock
from specwire.runtime.core.errors import MemoryServiceError, StoreError
from specwire.runtime.core.fragment import tenant_secret_variable
from specwire.runtime.core.fragment_data import FactsData
from specwire.runtime.core.tenancy import Tenant
from specwire.runtime.facts.providers.protocol import FactProvider
from specwire.runtime.safety.secrets import SecretRef

if TYPE_CHECKING:
    from specwire.runtime.embedders import Embedder

# The tenant column of facts written by targets without tenants (cli, channel, research, crew).
# It holds a "." that no tenant id may contain, so a managed tenant named "default" never
# shares facts with them.
DEFAULT_TENANT = "single.tenant"
# Per call, for the HTTP backend: a memory service slower than this fails the call.
HTTP_TIMEOUT_S = 5.0


@dataclass(frozen=True)
class RemoteProvider:
    provider: FactProvider
    # What the wiring log says about it (never a DSN, URL credentials or a token).
    description: str
    release: Callable[[], None]


def connect_remote(
    memory: FactsData,
    *,
    spec: str,
    tenant: Tenant | None,
    embedder: Embedder | None,
    now: Clock,
) -> RemoteProvider:
    """Connect ``memory.backend`` (``postgres`` or ``http``) for ``tenant``'s ``spec``."""
    if memory.backend == "postgres":
        return _postgres(memory, spec=spec, tenant=tenant, embedder=embedder, now=now)
    if memory.backend == "http":
        return _http(memory, spec=spec, tenant=tenant)
    raise MemoryServiceError(f"memory-service: {memory.backend!r} is not a remote backend")


def _postgres(
    memory: FactsData,
    *,
    spec: str,
    tenant: Tenant | None,
    embedder: Embedder | None,
    now: Clock,
) -> RemoteProvider:
    try:
        import psycopg_pool  # noqa: F401

        from specwire.runtime.facts.providers.postgres.provider import (
            FactScope,
            PostgresFactProvider,
        )
    except ImportError as exc:  # pragma: no cover - the extra is missing
        raise _missing_extra(exc, "postgres") from None
    dsn = _resolve(memory.dsn, "dsn")
    pool = _shared_pool(dsn)
    try:
        scope = FactScope(tenant.id if tenant is not None else DEFAULT_TENANT, spec)
        provider = PostgresFactProvider(scope=scope, pool=pool, embedder=embedder, now=now)
    except StoreError as exc:
        raise MemoryServiceError(f"memory-service: postgres backend: {exc}") from exc
    ranking = "full text" if embedder is None else f"full text + pgvector ({embedder.id})"
    return RemoteProvider(provider, f"PostgreSQL ({ranking})", provider.close)


def _http(memory: FactsData, *, spec: str, tenant: Tenant | None) -> RemoteProvider:
    try:
        from specwire.runtime.facts.providers.http.client import HttpFactProvider
    except ImportError as exc:  # pragma: no cover - the extra is missing
        raise _missing_extra(exc, "memory-http") from None
    url = memory.url or ""
    if url.startswith("$"):
        url = _resolve(url, "url")
    token_ref = memory.token
    if tenant is not None and token_ref is not None:
        token_ref = "$" + tenant_secret_variable(token_ref[1:], tenant.id)
    token = _resolve(token_ref, "token")
    try:
        provider = HttpFactProvider(
            url,
            token,
            spec,
            tenant=tenant.id if tenant is not None else None,
            timeout_s=HTTP_TIMEOUT_S,
        )
    except ValueError as exc:
        raise MemoryServiceError(f"memory-service: http backend: {exc}") from None
    except Exception:  # httpx.InvalidURL (a bad port): one line, never the URL itself
        raise MemoryServiceError(
            "memory-service: http backend: the memory service URL is not valid"
        ) from None
    return RemoteProvider(provider, f"memory service {provider.where}", provider.close)


def _resolve(reference: str | None, key: str) -> str:
    if reference is None or not reference.startswith("$"):
        raise MemoryServiceError(f"memory-service: memory.{key} must be a $SECRET reference")
    return SecretRef(reference[1:]).resolve()


def _missing_extra(exc: ImportError, extra: str) -> MemoryServiceError:
    return MemoryServiceError(
        f"memory-service: this memory backend needs {exc.name or 'a missing package'}: "
        f"pip install 'specwire[{extra}]'"
    )


def _shared_pool(dsn: str) -> Any:
    """The process's pool for ``dsn`` (``specwire.runtime.pg.pool.shared_pool``)."""
    from specwire.runtime.pg.pool import shared_pool

    try:
        return shared_pool(dsn)
    except StoreError as exc:
        raise MemoryServiceError(f"memory-service: postgres backend: {exc}") from exc


def close_shared_pools() -> None:
    """Close every pool this process opened (also run at exit)."""
    from specwire.runtime.pg.pool import close_shared_pools as close_pools

    close_pools()


def shared_postgres_pool(memory: FactsData) -> Any:
    """The process's pool for the spec's ``memory.dsn`` (the one its PostgreSQL facts use):
    other tiers kept in the same database (``runtime.documents``) share it."""
    return _shared_pool(_resolve(memory.dsn, "dsn"))
