"""``build_wiki``: the wiki tier's store, tools and recall lines from the fragment.

The wiki folder is created by the first write, not here: wiring leaves no trace on disk.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

from specwire.runtime.core.clock import Clock
from specwire.runtime.core.fragment import DEFAULT_WIKI_RECALL_K
from specwire.runtime.core.fragment_data import WikiData
from specwire.runtime.core.lazy_dataclass import lazy_methods_dataclass
from specwire.runtime.core.paths import StoreLayout
from specwire.runtime.core.tool_types import Tool
from specwire.runtime.core.volume import DocumentVolume
from specwire.runtime.wiki import queries
from specwire.runtime.wiki.semantic import WikiEmbedder
from specwire.runtime.wiki.store import WikiStore
from specwire.runtime.wiki.tools import GoalWriter, recall_line, wiki_tools


@lazy_methods_dataclass(frozen=True)
class WikiWiring:
    """The wiki tier as wired: store, tools, and its session-start recall."""

    store: WikiStore
    tools: list[Tool]
    # Lines for the session-start recall block, or None when wiki.autoRecall is off.
    recall: Callable[[str, int], list[str]] | None
    recall_k: int


def build_wiki(
    wiki: WikiData,
    layout: StoreLayout,
    *,
    embedder: WikiEmbedder | None,
    goals: GoalWriter | None,
    now: Clock,
    log: Callable[[str], None],
    volume: DocumentVolume | None = None,
) -> WikiWiring:
    store = WikiStore(
        layout,
        require_sources=wiki.require_sources is True,
        embedder=embedder,
        now=now,
        volume=volume,
    )
    _sweep_once(store)
    recall_k = wiki.recall_k or DEFAULT_WIKI_RECALL_K
    log(f"[memory] wiki on — {store.path}\n")
    return WikiWiring(
        store=store,
        tools=wiki_tools(store, goals),
        recall=_recall_lines(store) if wiki.auto_recall is True else None,
        recall_k=recall_k,
    )


_swept: set[Path] = set()
_swept_lock = threading.Lock()


def _sweep_once(store: WikiStore) -> None:
    """Remove a killed writer's temporaries, once per folder per process (per-turn hosts wire
    on every turn; listing a large folder every turn is waste)."""
    with _swept_lock:
        if store.folder.directory in _swept:
            return
        _swept.add(store.folder.directory)
    store.folder.sweep_temps()


def _recall_lines(store: WikiStore) -> Callable[[str, int], list[str]]:
    def recall(query: str, k: int) -> list[str]:
        hits = queries.recall(store.snapshot(), query, k, store.vectors)
        return [recall_line(hit.article) for hit in hits]

    return recall
