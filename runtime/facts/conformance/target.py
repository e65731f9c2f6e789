"""What the suite runs against: a *target*, made fresh for every case by a factory.

A target factory is ``factory(workdir: pathlib.Path) -> target``; ``workdir`` is an empty
folder of the case's own (deleted afterwards). The target has

``name: str``
``provider(tenant: str, spec: str, session: str | None = None) -> FactProvider``
    a provider bound to that scope (the suite uses the tenants in ``TENANTS``).
``close() -> None``

and, optionally (a missing one, or one returning ``None``, skips the cases that need it, with
the reason in ``skip_reasons``, a dict name → reason):

``advance(seconds: float) -> None``
    moves the clock the backend's TTLs run on (the TTL time-travel case).
``degraded(tenant, spec) -> FactProvider``  a provider whose backend is broken.
``stalled(tenant, spec) -> FactProvider``   a provider whose backend hangs.
``still_stalled() -> bool``
    whether every stall ``stalled`` made still hangs: a call that gave up at its deadline
    returned while it did (without it, only the hang guard checks the call returned).
``wrong_scope(tenant, spec) -> FactProvider``
    a provider whose requests claim a scope that disagrees with its bound context.
``deadline_s: float``
    set on a remote backend: its reads give up within about this long (the timeout cases).
``secrets: tuple[str, ...]``
    credentials the target's providers hold (tokens, passwords): no health message, error or
    descriptor may contain one.
``builtin: bool``
    True for the backends specwire ships: they must declare every capability the suite knows
    (a provider of one's own declares what it supports, and cases needing more are skipped).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from specwire.runtime.facts.conformance.checks import HANG_GUARD_S, skip
from specwire.runtime.facts.providers.local_admin import LocalFactAdmin
from specwire.runtime.facts.providers.protocol import (
    Capabilities,
    FactProvider,
    ForgetRequest,
    ForgetResult,
    Health,
    LocalFactProvider,
    RecallRequest,
    RecallResponse,
    RetainRequest,
    RetainResult,
)
from specwire.runtime.facts.store import FactStore

TENANTS = ("tenant-a", "tenant-b")
TargetFactory = Callable[[Path], Any]


@runtime_checkable
class Target(Protocol):
    name: str

    def provider(self, tenant: str, spec: str, session: str | None = None) -> FactProvider: ...

    def close(self) -> None: ...


def need(target: Any, what: str, tenant: str = TENANTS[0], spec: str = "conformance-bot") -> Any:
    """``target.<what>(tenant, spec)``; skips the case when the target does not offer it."""
    hook = getattr(target, what, None)
    made = hook(tenant, spec) if callable(hook) else None
    if made is None:
        reason = getattr(target, "skip_reasons", {}).get(what, f"the target offers no `{what}`")
        skip(reason)
    return made


def capable(target: Any, provider: FactProvider, *needs: str) -> Capabilities:
    """The provider's capabilities; skips the case unless it declares every one of ``needs``."""
    caps = provider.capabilities()
    for capability in needs:
        if not getattr(caps, capability):
            skip(f"the {target.name} backend does not declare `{capability}`")
    return caps


class ManualClock:
    """A clock the target moves by hand (``advance``), shared by every store it opens."""

    def __init__(self) -> None:
        self.moment = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)
        self._lock = threading.Lock()

    def __call__(self) -> datetime:
        with self._lock:
            return self.moment

    def advance(self, seconds: float) -> None:
        with self._lock:
            self.moment += timedelta(seconds=seconds)


class StallingProvider:
    """A backend that hangs on every call until released; ``ended`` records each call that
    stopped hanging (released, or past the hang guard)."""

    def __init__(self, release: threading.Event, ended: list[str] | None = None) -> None:
        self._release = release
        self._ended = ended if ended is not None else []

    def _stall(self) -> None:
        self._release.wait(HANG_GUARD_S)
        self._ended.append("stall ended")

    def retain(self, request: RetainRequest) -> RetainResult:
        self._stall()
        raise RuntimeError("stalled")

    def recall(self, request: RecallRequest) -> RecallResponse:
        self._stall()
        return RecallResponse(())

    def forget(self, request: ForgetRequest) -> ForgetResult:
        self._stall()
        return ForgetResult(0)

    def health(self) -> Health:
        self._stall()
        return Health(False, "stalled", datetime.now(UTC))

    def capabilities(self) -> Capabilities:
        return Capabilities()


ScopeProvider = Callable[[str, str, str | None], FactProvider]


class ScratchStores:
    """One ``FactStore`` per scope under ``root``, on a shared clock; two specs are special:
    ``STALLED`` (a ``StallingProvider``) and ``DEGRADED`` (a store closed under its provider).

    ``served``: ordinary scopes come from it instead (a server's own store layout)."""

    STALLED = "stalled-spec"
    DEGRADED = "degraded-spec"

    def __init__(
        self,
        root: Path,
        clock: Callable[[], datetime],
        *,
        served: ScopeProvider | None = None,
    ) -> None:
        self.root = root
        self.served = served
        self.clock = clock
        self.release = threading.Event()
        self.stalls_ended: list[str] = []
        self._open: dict[tuple[str, str, str | None], LocalFactProvider] = {}
        self._lock = threading.Lock()

    def __call__(self, tenant: str, spec: str, session: str | None) -> FactProvider:
        if spec == self.STALLED:
            return StallingProvider(self.release, self.stalls_ended)
        if self.served is not None and spec != self.DEGRADED:
            return self.served(tenant, spec, session)
        with self._lock:
            key = (tenant, spec, session)
            provider = self._open.get(key)
            if provider is None:
                folder = self.root / tenant / (session or "_shared")
                store = FactStore.open(folder / f"{spec}.sqlite3", now=self.clock)
                if spec == self.DEGRADED:
                    store.close()
                provider = LocalFactAdmin(store)
                self._open[key] = provider
            return provider

    def close(self) -> None:
        self.release.set()
        with self._lock:
            for provider in self._open.values():
                provider.store.close()


class LocalTarget:
    """The file backend: ``LocalFactAdmin`` over a SQLite ``FactStore`` per scope."""

    name = "local"
    builtin = True
    skip_reasons = {
        "wrong_scope": "the embedded provider is bound to one store file: its requests carry "
        "no scope that could disagree with it",
    }

    def __init__(self, workdir: Path) -> None:
        self.clock = ManualClock()
        self.stores = ScratchStores(workdir / "local", self.clock)
        self._held: list[threading.Event] = []
        self._locks_released: list[str] = []

    def provider(self, tenant: str, spec: str, session: str | None = None) -> FactProvider:
        return self.stores(tenant, spec, session)

    def advance(self, seconds: float) -> None:
        self.clock.advance(seconds)

    def degraded(self, tenant: str, spec: str) -> FactProvider | None:
        return self.stores(tenant, ScratchStores.DEGRADED, None)

    def stalled(self, tenant: str, spec: str) -> FactProvider | None:
        """A store whose lock another thread holds: health must still answer in time."""
        provider = self.stores(tenant, f"{spec}-locked", None)
        assert isinstance(provider, LocalFactProvider)
        lock = provider.store._file.lock
        held, done = threading.Event(), threading.Event()

        def hold() -> None:
            with lock:
                held.set()
                done.wait(HANG_GUARD_S)
            self._locks_released.append(spec)

        threading.Thread(target=hold, daemon=True).start()
        held.wait(5)
        self._held.append(done)
        return provider

    def still_stalled(self) -> bool:
        """True while every stall ``stalled`` made still holds its store's lock."""
        return not self._locks_released

    def wrong_scope(self, tenant: str, spec: str) -> FactProvider | None:
        return None

    def close(self) -> None:
        for done in self._held:
            done.set()
        self.stores.close()


def local(workdir: Path) -> LocalTarget:
    """``--provider specwire.runtime.facts.conformance.target:local``: the file backend."""
    return LocalTarget(workdir)
