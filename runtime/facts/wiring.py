"""``wire_facts``: the facts tier of ``wire_memory`` (provider, tools and loop seam).

The tools, auto-recall and auto-capture speak only the provider protocol: ``memory.backend``
chooses the provider (``file``: the embedded SQLite store, the default; ``postgres`` and
``http``: ``runtime.facts.providers.connect``) and nothing else changes.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from specwire.runtime.core.clock import Clock
from specwire.runtime.core.errors import MemoryServiceError, StoreError
from specwire.runtime.core.fragment import (
    DEFAULT_AUTO_CAPTURE,
    DEFAULT_AUTO_CAPTURE_THRESHOLD,
    DEFAULT_AUTO_RECALL,
    DEFAULT_RECALL_K,
    DEFAULT_REFRESH_EVERY,
    WIRABLE_BACKENDS,
)
from specwire.runtime.core.fragment_data import FactsData
from specwire.runtime.core.lazy_dataclass import lazy_methods_dataclass
from specwire.runtime.core.paths import StoreLayout
from specwire.runtime.core.scopes import Audience
from specwire.runtime.core.seams import MemorySeam, RecallMode
from specwire.runtime.core.tenancy import Tenant
from specwire.runtime.core.tool_types import Tool
from specwire.runtime.facts.model import MAX_RECALL_K, MAX_TEXT_CHARS
from specwire.runtime.facts.pool import FactStorePool, lease_store
from specwire.runtime.facts.providers.protocol import FactProvider, LocalFactProvider, RecallRequest
from specwire.runtime.facts.scoping import UNSCOPED, FactScoping, fact_scoping
from specwire.runtime.facts.store import FactStore
from specwire.runtime.facts.sweeping import sweep_if_due
from specwire.runtime.facts.text import clip_query
from specwire.runtime.facts.tools import fact_tools
from specwire.runtime.sessions.store import LogSource

if TYPE_CHECKING:
    from specwire.runtime.embedders import Embedder
    from specwire.runtime.facts.routing.diagnostics import Diagnostics

KNOWN_BACKENDS = WIRABLE_BACKENDS

_T = TypeVar("_T")


@lazy_methods_dataclass(frozen=True)
class FactsWiring:
    """The facts tier as wired: store, provider, tools, seam and release."""

    # The embedded store (backend ``file``); None on a remote backend.
    store: FactStore | None
    provider: FactProvider
    tools: list[Tool]
    seam: MemorySeam
    # Closes ``store`` or gives it back to the host's pool; closes a remote provider's
    # connection. Idempotent.
    release: Callable[[], None]
    # Where this wiring writes and what it may read (session records follow it too).
    scoping: FactScoping = UNSCOPED


@lazy_methods_dataclass(frozen=True)
class FactsSettings:
    """The fragment's facts knobs with runtime defaults applied."""

    auto_recall: bool
    recall_k: int
    auto_capture: bool
    capture_threshold: int
    ttl_ms: int | None
    recall_mode: RecallMode = "session-start"
    refresh_every: int = DEFAULT_REFRESH_EVERY

    @classmethod
    def resolve(cls, memory: FactsData) -> FactsSettings:
        return cls(
            auto_recall=_default(memory.auto_recall, DEFAULT_AUTO_RECALL),
            recall_k=max(1, _default(memory.recall_k, DEFAULT_RECALL_K)),
            auto_capture=_default(memory.auto_capture, DEFAULT_AUTO_CAPTURE),
            capture_threshold=max(
                1, _default(memory.auto_capture_threshold, DEFAULT_AUTO_CAPTURE_THRESHOLD)
            ),
            ttl_ms=memory.ttl_ms,
            recall_mode=memory.recall_mode or "session-start",
            refresh_every=max(1, _default(memory.refresh_every, DEFAULT_REFRESH_EVERY)),
        )


def wire_facts(
    memory: FactsData,
    layout: StoreLayout,
    *,
    sessions_dir: LogSource,
    now: Clock,
    log: Callable[[str], None],
    embedder: Embedder | None = None,
    tenant: Tenant | None = None,
    fact_stores: FactStorePool | None = None,
    audience: Audience | None = None,
    agent_folder: Path | None = None,
) -> FactsWiring:
    """Connect the spec's fact provider and build its tools and seam. The caller calls
    ``release`` when done, not ``store.close``.

    Backend ``file``: the spec's fact store, borrowed from ``fact_stores`` (the host's pool)
    when given, else opened here and closed by ``release``.
    Creates nothing on disk: the store's directory and file appear with the first fact written
    (``FactStore`` opens lazily), so a host that only parses its arguments leaves no trace.
    Backends ``postgres`` and ``http``: connected now, so a missing secret or an unreachable
    database fails the wiring with one line.

    Recall is hybrid when the spec names ``memory.embedder`` (loaded here, so a missing extra or
    key fails the wiring with one line) or when ``embedder`` is given ready-made.

    With ``memory.scope``, writes go to the audience's key and reads see only its visible keys
    (``runtime.facts.scoping``); a scoped spec wired without an audience fails here.

    With ``memory.providers``, the provider is a ``FactRouter`` over the primary and those
    (``runtime.facts.routing``): recall reads them all, writes go to the primary, and the seam's
    ``diagnostics`` reports the ones that failed. Their ``path`` is relative to
    ``agent_folder`` (default: the folder holding ``.specwire``).
    """
    check_backend(memory.backend)
    settings = FactsSettings.resolve(memory)
    scoping = fact_scoping(memory.scope, audience)
    if memory.backend == "http" and memory.protocol == "opencomputer":
        from specwire.runtime.facts.opencomputer_wiring import wire_opencomputer

        return wire_opencomputer(memory, layout, settings, scoping, tenant=tenant, log=log)
    routed = bool(memory.providers)
    if embedder is None and memory.embedder is not None and (memory.backend != "http" or routed):
        from specwire.runtime.embedders import load_embedder

        embedder = load_embedder(memory.embedder)
    if memory.backend == "http" and memory.embedder is not None:
        log("[memory] the memory service ranks facts: memory.embedder is not used for them\n")
    if memory.backend in ("postgres", "http"):
        from specwire.runtime.facts.providers.connect import connect_remote

        remote = connect_remote(
            memory, spec=layout.spec_name, tenant=tenant, embedder=embedder, now=now
        )
        log(f"[memory] facts live in {remote.description}\n")
        if memory.backend == "postgres":
            from specwire.runtime.facts.providers.postgres.sweeping import (
                sweep_if_due as sweep_postgres_if_due,
            )

            sweep_postgres_if_due(remote.provider, log)
        try:
            provider, release, diagnostics = _routed(
                memory,
                remote.provider,
                remote.release,
                agent_folder=agent_folder or layout.root.parent,
                spec=layout.spec_name,
                tenant=tenant,
                embedder=embedder,
                now=now,
                log=log,
            )
            return _wire_provider(
                provider,
                None,
                release,
                settings,
                scoping,
                where=remote.description,
                sessions_dir=sessions_dir,
                log=log,
                diagnostics=diagnostics,
            )
        except BaseException:
            remote.release()
            raise
    try:
        lease = lease_store(layout.facts_db, now, fact_stores)
    except StoreError as exc:
        raise MemoryServiceError(f"memory-service: {exc}") from exc
    sweep_if_due(layout.facts_db, now, log)
    try:
        store = lease.store
        store.use_embedder(embedder, log=log)
        if embedder is not None:
            log(f"[memory] hybrid recall wired: BM25 + cosine ({embedder.id}, RRF k=60)\n")
        provider, release, diagnostics = _routed(
            memory,
            LocalFactProvider(store),
            lease.release,
            agent_folder=agent_folder or layout.root.parent,
            spec=layout.spec_name,
            tenant=tenant,
            embedder=embedder,
            now=now,
            log=log,
        )
        return _wire_provider(
            provider,
            store,
            release,
            settings,
            scoping,
            where=str(store.path),
            sessions_dir=sessions_dir,
            log=log,
            diagnostics=diagnostics,
        )
    except BaseException:
        lease.release()
        raise


def _routed(
    memory: FactsData,
    primary: FactProvider,
    release: Callable[[], None],
    *,
    agent_folder: Path,
    spec: str,
    tenant: Tenant | None,
    embedder: Embedder | None,
    now: Clock,
    log: Callable[[str], None],
) -> tuple[FactProvider, Callable[[], None], Diagnostics | None]:
    """``primary`` alone, or a router over it and ``memory.providers`` (with what releases
    both and the diagnostics the seam drains)."""
    if not memory.providers:
        return primary, release, None
    from specwire.runtime.facts.routing.connect import connect_providers
    from specwire.runtime.facts.routing.router import FactRouter, RoutedProvider

    others = connect_providers(
        memory,
        agent_folder=agent_folder,
        spec=spec,
        tenant=tenant,
        embedder=embedder,
        now=now,
        log=log,
    )
    router = FactRouter(RoutedProvider("primary", memory.backend or "file", primary, 0.0), others)
    names = ", ".join(f"{member.name} ({member.backend})" for member in others)
    log(f"[memory] recall also reads {names} (RRF across providers; writes go to the primary)\n")

    def release_all() -> None:
        try:
            router.dispose()
        finally:
            release()

    return router, release_all, router.diagnostics


def _wire_provider(
    provider: FactProvider,
    store: FactStore | None,
    release: Callable[[], None],
    settings: FactsSettings,
    scoping: FactScoping,
    *,
    where: str,
    sessions_dir: LogSource,
    log: Callable[[str], None],
    diagnostics: Diagnostics | None = None,
) -> FactsWiring:
    seam = MemorySeam(
        auto_recall=settings.auto_recall,
        recall_k=settings.recall_k,
        recall=_recall_lines(provider, scoping) if settings.auto_recall else None,
        auto_capture=settings.auto_capture,
        capture_threshold=settings.capture_threshold,
        on_capture=(
            _capture(provider, where, sessions_dir, settings, scoping, log)
            if settings.auto_capture
            else None
        ),
        recall_mode=settings.recall_mode,
        refresh_every=settings.refresh_every,
        diagnostics=_drain(diagnostics) if diagnostics is not None else None,
    )
    tools = fact_tools(
        provider, ttl_ms=settings.ttl_ms, recall_k=settings.recall_k, scoping=scoping
    )
    names = "/".join(tool.name for tool in tools)
    scope = f", scope={scoping.default}" if scoping.default is not None else ""
    log(
        f"[memory] {names} wired (autoRecall={_recall_flag(settings)}, "
        f"autoCapture={_flag(settings.auto_capture)}{scope})\n"
    )
    return FactsWiring(
        store=store, provider=provider, tools=tools, seam=seam, release=release, scoping=scoping
    )


def _drain(
    diagnostics: Diagnostics,
) -> Callable[[], list[tuple[str, Mapping[str, str]]]]:
    def drain() -> list[tuple[str, Mapping[str, str]]]:
        return [(found.line(), found.payload()) for found in diagnostics.drain()]

    return drain


def check_backend(backend: str | None) -> None:
    chosen = backend or "file"
    if chosen not in KNOWN_BACKENDS:
        raise MemoryServiceError(
            f'memory-service: unknown memory backend "{chosen}" '
            f"(known: {', '.join(KNOWN_BACKENDS)})"
        )


def _recall_lines(provider: FactProvider, scoping: FactScoping) -> Callable[[str, int], list[str]]:
    """Auto-recall through the provider, of the keys the audience may see. A failure
    propagates: the loop blocks the turn rather than answer with silently empty memory. A keyed
    fact longer than a plain one is cut (the MemoryRead tool has it whole)."""

    def recall(query: str, k: int) -> list[str]:
        request = RecallRequest(
            clip_query(query), max(1, min(k, MAX_RECALL_K)), visible=scoping.visible
        )
        return [_clip(hit.text) for hit in provider.recall(request).hits]

    return recall


def _clip(text: str) -> str:
    return text if len(text) <= MAX_TEXT_CHARS else text[: MAX_TEXT_CHARS - 1] + "…"


def _capture(
    provider: FactProvider,
    where: str,
    sessions_dir: LogSource,
    settings: FactsSettings,
    scoping: FactScoping,
    log: Callable[[str], None],
) -> Callable[[int, str], int]:
    def on_capture(completed_turns: int, session_id: str) -> int:
        from specwire.runtime.facts.capture import capture_session  # not before the first capture

        try:
            count = capture_session(
                provider,
                sessions_dir,
                session_id,
                ttl_ms=settings.ttl_ms,
                threshold=settings.capture_threshold,
                completed_turns=completed_turns,
                scope=scoping.write_key,
                visible=scoping.visible,
            )
        except StoreError as exc:
            log(f"[memory] auto-capture skipped: {exc}\n")
            return 0
        if count > 0:
            log(f"[memory] auto-captured {count} durable fact(s) into {where}\n")
        return count

    return on_capture


def _default(value: _T | None, default: _T) -> _T:
    return default if value is None else value


def _recall_flag(settings: FactsSettings) -> str:
    """``true``, ``false`` or ``per-turn every N turn(s)``."""
    if settings.auto_recall and settings.recall_mode == "per-turn":
        return f"per-turn every {settings.refresh_every} turn(s)"
    return _flag(settings.auto_recall)


def _flag(value: bool) -> str:
    return "true" if value else "false"
