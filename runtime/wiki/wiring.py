"""``build_wiki``: the wiki tier's store, tools and recall lines from the fragment.

The wiki folder is created by the first write, not here: wiring leaves no trace on disk.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from runtime.events import Clock
from runtime.fragment import DEFAULT_WIKI_RECALL_K, WikiFragment
from runtime.paths import StoreLayout
from runtime.tools import Tool
from runtime.wiki import queries
from runtime.wiki.semantic import WikiEmbedder
from runtime.wiki.store import WikiStore
from runtime.wiki.tools import GoalWriter, recall_line, wiki_tools


@dataclass(frozen=True)
class WikiWiring:
    store: WikiStore
    tools: list[Tool]
    # Lines for the session-start recall block, or None when wiki.autoRecall is off.
    recall: Callable[[str, int], list[str]] | None
    recall_k: int


def build_wiki(
    wiki: WikiFragment,
    layout: StoreLayout,
    *,
    embedder: WikiEmbedder | None,
    goals: GoalWriter | None,
    now: Clock,
    log: Callable[[str], None],
) -> WikiWiring:
    store = WikiStore(
        layout, require_sources=wiki.require_sources is True, embedder=embedder, now=now
    )
    store.folder.sweep_temps()
    recall_k = wiki.recall_k or DEFAULT_WIKI_RECALL_K
    log(f"[memory] wiki on — {store.path}\n")
    return WikiWiring(
        store=store,
        tools=wiki_tools(store, goals),
        recall=_recall_lines(store) if wiki.auto_recall is True else None,
        recall_k=recall_k,
    )


def _recall_lines(store: WikiStore) -> Callable[[str, int], list[str]]:
    def recall(query: str, k: int) -> list[str]:
        hits = queries.recall(store.snapshot(), query, k, store.vectors)
        return [recall_line(hit.article) for hit in hits]

    return recall
