"""Cosine ranking of articles with an optional embedder.

The wiki only needs what ``runtime.embedders.Embedder`` offers (``id``, ``dim``, ``embed``); it
is typed here as a local protocol so the wiki works with any object of that shape and imports
no embedder code (numpy included) unless a spec asks for one.

Vectors are cached per (wiki folder, embedder id, slug, version, content), shared by every
store on the folder in this process (per-turn hosts open one each turn): an edit re-embeds that
article only, a different embedder never reuses, or ranks against, another model's vectors, and
two tenants' articles never share a vector.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

from specwire.runtime.wiki.article import Article
from specwire.runtime.wiki.ranking import cosine
from specwire.runtime.wiki.snapshot import contextual_text


class WikiEmbedder(Protocol):
    @property
    def id(self) -> str: ...

    @property
    def dim(self) -> int: ...

    def embed(self, texts: Sequence[str]) -> Any:
        """An (n, dim) array-like of L2-normalised float rows, one per text."""
        ...


Vector = Sequence[float]
MAX_CACHED_VECTORS = 100_000


# (folder, embedder id, slug, version, hash of the embedded fields: a person may edit a file
# in place without bumping its version)
Key = tuple[Path, str, str, int, int]
_vectors: dict[Key, Vector] = {}
_lock = threading.Lock()


class VectorCache:
    def __init__(self, embedder: WikiEmbedder, scope: Path) -> None:
        self.embedder = embedder
        self.scope = scope
        self._vectors = _vectors
        self._lock = _lock

    def _key(self, article: Article) -> Key:
        content = hash((article.title, article.tags, article.body))
        return (self.scope, self.embedder.id, article.slug, article.version, content)

    def vectors(self, articles: Iterable[Article]) -> dict[str, Vector]:
        wanted = list(articles)
        with self._lock:
            missing = [a for a in wanted if self._key(a) not in self._vectors]
        if missing:
            rows = self.embedder.embed([contextual_text(a) for a in missing])
            with self._lock:
                if len(self._vectors) + len(missing) > MAX_CACHED_VECTORS:
                    self._vectors.clear()
                for article, row in zip(missing, rows, strict=True):
                    self._vectors[self._key(article)] = [float(x) for x in row]
        with self._lock:
            return {
                a.slug: self._vectors[self._key(a)] for a in wanted if self._key(a) in self._vectors
            }

    def query(self, text: str) -> Vector:
        rows = self.embedder.embed([text])
        return [float(x) for x in rows[0]]

    def rank(self, query: str, articles: Mapping[str, Article]) -> list[tuple[str, float]]:
        """``(slug, cosine)`` with a positive cosine, best first (ties by slug)."""
        if not articles:
            return []
        probe = self.query(query)
        scored = [
            (slug, cosine(probe, vector))
            for slug, vector in self.vectors(articles.values()).items()
        ]
        ranked = [(slug, score) for slug, score in scored if score > 0]
        ranked.sort(key=lambda item: (-item[1], item[0]))
        return ranked

    def similarity(self, a: Article, b: Article) -> float:
        vectors = self.vectors([a, b])
        if a.slug not in vectors or b.slug not in vectors:
            return 0.0
        return max(0.0, cosine(vectors[a.slug], vectors[b.slug]))
