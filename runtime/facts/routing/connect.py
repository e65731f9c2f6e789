"""The providers ``memory.providers`` names beside the primary, connected for one wiring.

- ``markdown``: a ``MarkdownVaultProvider`` over ``path``;
- ``file``: another embedded fact store, the SQLite file at ``path`` (read here, never written:
  the file is not created when missing);
- ``postgres`` and ``http``: as the primary would be (``providers.connect``), with the
  provider's own ``dsn`` or ``url`` and ``token``.

``path`` is relative to the agent's folder: the working folder, or with tenants (managed) the
tenant's root, so no tenant reads another's notes. A provider that cannot be connected (an
unset secret, an unreachable database) does not fail the wiring: it becomes a provider whose
every recall fails, so the router records it each turn and goes on (the start-up checks report
it before a bundle starts).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from specwire.runtime.core.clock import Clock
from specwire.runtime.core.errors import MemoryServiceError, StoreError
from specwire.runtime.core.fragment import PROVIDER_DEADLINE_MS_DEFAULT
from specwire.runtime.core.tenancy import Tenant
from specwire.runtime.facts.providers.protocol import (
    Capabilities,
    ForgetRequest,
    ForgetResult,
    Health,
    LocalFactProvider,
    RecallRequest,
    RecallResponse,
    RetainRequest,
    RetainResult,
)
from specwire.runtime.facts.routing.router import RoutedProvider
from specwire.runtime.facts.vault.scan import check_vault_path

if TYPE_CHECKING:
    from specwire.runtime.core.fragment_data import FactsData, ProviderData
    from specwire.runtime.embedders import Embedder


class UnconnectedProvider:
    """A provider that could not be connected: every call fails with why (one line)."""

    def __init__(self, name: str, problem: StoreError, now: Clock) -> None:
        self._name = name
        self._problem = problem
        self._now = now

    def retain(self, request: RetainRequest) -> RetainResult:
        raise self._problem

    def recall(self, request: RecallRequest) -> RecallResponse:
        raise self._problem

    def forget(self, request: ForgetRequest) -> ForgetResult:
        raise self._problem

    def health(self) -> Health:
        return Health(False, "not connected", self._now())

    def capabilities(self) -> Capabilities:
        return Capabilities()


def connect_providers(
    memory: FactsData,
    *,
    agent_folder: Path,
    spec: str,
    tenant: Tenant | None,
    embedder: Embedder | None,
    now: Clock,
    log: Callable[[str], None],
) -> list[RoutedProvider]:
    """Every provider of ``memory.providers``, in the spec's order."""
    members = []
    for fragment in memory.providers or ():
        deadline_s = (fragment.deadline_ms or PROVIDER_DEADLINE_MS_DEFAULT) / 1000
        try:
            member = _connect(
                fragment,
                memory,
                agent_folder=agent_folder,
                spec=spec,
                tenant=tenant,
                embedder=embedder,
                now=now,
                deadline_s=deadline_s,
            )
        except (MemoryServiceError, StoreError, ValueError) as exc:
            problem = exc if isinstance(exc, StoreError) else StoreError(str(exc))
            log(
                f"[memory] provider {fragment.name} ({fragment.backend}) is not connected; "
                "recall goes on without it\n"
            )
            member = RoutedProvider(
                fragment.name,
                fragment.backend,
                UnconnectedProvider(fragment.name, problem, now),
                deadline_s,
            )
        members.append(member)
    return members


def _connect(
    fragment: ProviderData,
    memory: FactsData,
    *,
    agent_folder: Path,
    spec: str,
    tenant: Tenant | None,
    embedder: Embedder | None,
    now: Clock,
    deadline_s: float,
) -> RoutedProvider:
    name, backend = fragment.name, fragment.backend
    if backend == "markdown":
        from specwire.runtime.facts.vault.provider import MarkdownVaultProvider

        vault = MarkdownVaultProvider(
            agent_folder, fragment.path or "", name=name, embedder=embedder, now=now
        )
        return RoutedProvider(name, backend, vault, deadline_s, vault.dispose)
    if backend == "file":
        from specwire.runtime.facts.store import FactStore

        parts = check_vault_path(fragment.path or "")
        store = FactStore.open(agent_folder.joinpath(*parts), now=now, embedder=embedder)
        return RoutedProvider(
            name, backend, LocalFactProvider(store, name=name), deadline_s, store.close
        )
    if backend in ("postgres", "http"):
        from specwire.runtime.facts.providers.connect import connect_remote

        settings = dataclasses.replace(
            memory,
            backend=backend,
            dsn=fragment.dsn,
            url=fragment.url,
            token=fragment.token,
            protocol=fragment.protocol,
        )
        remote = connect_remote(settings, spec=spec, tenant=tenant, embedder=embedder, now=now)
        return RoutedProvider(name, backend, remote.provider, deadline_s, remote.release)
    raise MemoryServiceError(f"memory-service: unknown provider backend {backend!r}")
