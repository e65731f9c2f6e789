"""``wire_facts``: the facts tier of ``wire_memory`` (store, provider, tools and loop seam)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from runtime.errors import MemoryServiceError, StoreError
from runtime.events import Clock
from runtime.facts.capture import capture_session
from runtime.facts.pool import FactStoreLease
from runtime.facts.provider import LocalFactProvider
from runtime.facts.store import FactStore
from runtime.facts.sweeping import sweep_if_due
from runtime.facts.tools import fact_tools
from runtime.fragment import (
    DEFAULT_AUTO_CAPTURE,
    DEFAULT_AUTO_CAPTURE_THRESHOLD,
    DEFAULT_AUTO_RECALL,
    DEFAULT_RECALL_K,
    WIRABLE_BACKENDS,
    MemoryFactsFragment,
)
from runtime.paths import StoreLayout
from runtime.seams import MemorySeam
from runtime.tools import Tool
from runtime.warm import fact_store_lease

if TYPE_CHECKING:
    from runtime.embedders import Embedder

KNOWN_BACKENDS = WIRABLE_BACKENDS

_T = TypeVar("_T")


@dataclass(frozen=True)
class FactsWiring:
    store: FactStore
    provider: LocalFactProvider
    tools: list[Tool]
    seam: MemorySeam
    # Closes ``store``, or gives it back to the warm pool (``runtime.warm``). Idempotent.
    release: Callable[[], None]


@dataclass(frozen=True)
class FactsSettings:
    """The fragment's facts knobs with runtime defaults applied."""

    auto_recall: bool
    recall_k: int
    auto_capture: bool
    capture_threshold: int
    ttl_ms: int | None

    @classmethod
    def resolve(cls, memory: MemoryFactsFragment) -> FactsSettings:
        return cls(
            auto_recall=_default(memory.auto_recall, DEFAULT_AUTO_RECALL),
            recall_k=max(1, _default(memory.recall_k, DEFAULT_RECALL_K)),
            auto_capture=_default(memory.auto_capture, DEFAULT_AUTO_CAPTURE),
            capture_threshold=max(
                1, _default(memory.auto_capture_threshold, DEFAULT_AUTO_CAPTURE_THRESHOLD)
            ),
            ttl_ms=memory.ttl_ms,
        )


def wire_facts(
    memory: MemoryFactsFragment,
    layout: StoreLayout,
    *,
    sessions_dir: Path,
    now: Clock,
    log: Callable[[str], None],
    embedder: Embedder | None = None,
) -> FactsWiring:
    """Open the spec's fact store (or borrow it from the warm pool, ``runtime.warm``) and build
    its tools and seam. The caller calls ``release`` when done, not ``store.close``.

    Recall is hybrid when the spec names ``memory.embedder`` (loaded here, so a missing extra or
    key fails the wiring with one line) or when ``embedder`` is given ready-made.

    Creates nothing on disk: the store's directory and file appear with the first fact written
    (``FactStore`` opens lazily), so a host that only parses its arguments leaves no trace.
    """
    check_backend(memory.backend)
    settings = FactsSettings.resolve(memory)
    if embedder is None and memory.embedder is not None:
        from runtime.embedders import load_embedder

        embedder = load_embedder(memory.embedder)
    try:
        lease = fact_store_lease(layout.facts_db, now)
    except StoreError as exc:
        raise MemoryServiceError(f"memory-service: {exc}") from exc
    sweep_if_due(layout.facts_db, now, log)
    try:
        return _wire_store(lease, settings, embedder, sessions_dir=sessions_dir, log=log)
    except BaseException:
        lease.release()
        raise


def _wire_store(
    lease: FactStoreLease,
    settings: FactsSettings,
    embedder: Embedder | None,
    *,
    sessions_dir: Path,
    log: Callable[[str], None],
) -> FactsWiring:
    store = lease.store
    store.use_embedder(embedder, log=log)
    if embedder is not None:
        log(f"[memory] hybrid recall wired: BM25 + cosine ({embedder.id}, RRF k=60)\n")
    seam = MemorySeam(
        auto_recall=settings.auto_recall,
        recall_k=settings.recall_k,
        recall=_recall_lines(store) if settings.auto_recall else None,
        auto_capture=settings.auto_capture,
        capture_threshold=settings.capture_threshold,
        on_capture=(
            _capture(store, sessions_dir, settings, log) if settings.auto_capture else None
        ),
    )
    tools = fact_tools(store, ttl_ms=settings.ttl_ms, recall_k=settings.recall_k)
    log(
        "[memory] Remember/Recall/MemoryForget wired "
        f"(autoRecall={_flag(settings.auto_recall)}, autoCapture={_flag(settings.auto_capture)})\n"
    )
    return FactsWiring(
        store=store,
        provider=LocalFactProvider(store),
        tools=tools,
        seam=seam,
        release=lease.release,
    )


def check_backend(backend: str | None) -> None:
    chosen = backend or "file"
    if chosen not in KNOWN_BACKENDS:
        raise MemoryServiceError(
            f'memory-service: unknown memory backend "{chosen}" '
            f"(known: {', '.join(KNOWN_BACKENDS)})"
        )


def _recall_lines(store: FactStore) -> Callable[[str, int], list[str]]:
    def recall(query: str, k: int) -> list[str]:
        return [hit.fact.text for hit in store.recall(query, k)]

    return recall


def _capture(
    store: FactStore, sessions_dir: Path, settings: FactsSettings, log: Callable[[str], None]
) -> Callable[[int, str], int]:
    def on_capture(completed_turns: int, session_id: str) -> int:
        try:
            count = capture_session(
                store,
                sessions_dir,
                session_id,
                ttl_ms=settings.ttl_ms,
                threshold=settings.capture_threshold,
                completed_turns=completed_turns,
            )
        except StoreError as exc:
            log(f"[memory] auto-capture skipped: {exc}\n")
            return 0
        if count > 0:
            log(f"[memory] auto-captured {count} durable fact(s) into {store.path}\n")
        return count

    return on_capture


def _default(value: _T | None, default: _T) -> _T:
    return default if value is None else value


def _flag(value: bool) -> str:
    return "true" if value else "false"
