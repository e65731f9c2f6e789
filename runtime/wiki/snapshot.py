"""What the wiki holds right now, read once per change: parsed articles, damaged files, the
BM25 index and the link graph.

Reading is incremental: each query scans the article folder's file stamps (inode, size,
mtime) and re-parses only the files that changed since the last look, in this process or any
other (a person's edit included). The parsed state is shared by every store instance on the same
folder in this process — per-turn hosts open a store every turn — and bounded (least recently
used folders out first).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from runtime.errors import StoreError
from runtime.wiki.article import Article, DamagedArticle, parse_article
from runtime.wiki.folder import Stamp, WikiFolder
from runtime.wiki.ranking import Bm25Index

MAX_CACHED_FOLDERS: Final = 64


def contextual_text(article: Article) -> str:
    """What keyword and semantic ranking read: title, tags, body."""
    tags = f"\n[tags: {', '.join(article.tags)}]" if article.tags else ""
    return f"{article.title}{tags}\n\n{article.body}"


@dataclass(frozen=True)
class WikiSnapshot:
    articles: Mapping[str, Article]
    # slug -> why its file is not readable as an article
    damaged: Mapping[str, str]
    index: Bm25Index
    # slug -> slugs of existing articles linking to it
    backlinks: Mapping[str, tuple[str, ...]]

    def neighbours(self, slug: str) -> tuple[str, ...]:
        """Articles linked from or to ``slug`` (existing ones only), outgoing first."""
        article = self.articles.get(slug)
        out = [s for s in (article.links if article else ()) if s in self.articles]
        return tuple(dict.fromkeys([*out, *self.backlinks.get(slug, ())]))


@dataclass
class _Cached:
    stamps: dict[str, Stamp] = field(default_factory=dict)
    parsed: dict[str, Article | str] = field(default_factory=dict)
    snapshot: WikiSnapshot | None = None


_cache: OrderedDict[Path, _Cached] = OrderedDict()
_cache_lock = threading.Lock()


def _entry(directory: Path) -> _Cached:
    with _cache_lock:
        cached = _cache.get(directory)
        if cached is None:
            cached = _cache[directory] = _Cached()
            while len(_cache) > MAX_CACHED_FOLDERS:
                _cache.popitem(last=False)
        else:
            _cache.move_to_end(directory)
        return cached


def _read(folder: WikiFolder, slug: str) -> Article | str:
    try:
        text = folder.read_article(slug)
    except StoreError as exc:
        return str(exc)
    except UnicodeDecodeError:
        return "is not UTF-8 text"
    if text is None:
        return "disappeared while it was being read"
    try:
        return parse_article(text, expected_slug=slug)
    except DamagedArticle as exc:
        return str(exc)


def load_snapshot(folder: WikiFolder) -> WikiSnapshot:
    stamps = folder.scan()
    cached = _entry(folder.directory)
    with _cache_lock:
        if cached.snapshot is not None and cached.stamps == stamps:
            return cached.snapshot
        previous_stamps, previous = dict(cached.stamps), dict(cached.parsed)
    parsed = {
        slug: previous[slug] if previous_stamps.get(slug) == stamp else _read(folder, slug)
        for slug, stamp in stamps.items()
    }
    snapshot = _build(parsed)
    with _cache_lock:
        cached.stamps, cached.parsed, cached.snapshot = stamps, parsed, snapshot
    return snapshot


def _build(parsed: Mapping[str, Article | str]) -> WikiSnapshot:
    articles = {slug: a for slug, a in sorted(parsed.items()) if isinstance(a, Article)}
    damaged = {slug: why for slug, why in sorted(parsed.items()) if isinstance(why, str)}
    backlinks: dict[str, list[str]] = {}
    for slug, article in articles.items():
        for target in article.links:
            backlinks.setdefault(target, []).append(slug)
    index = Bm25Index({slug: contextual_text(a) for slug, a in articles.items()})
    return WikiSnapshot(
        articles=articles,
        damaged=damaged,
        index=index,
        backlinks={slug: tuple(sources) for slug, sources in backlinks.items()},
    )


def forget_cached(directory: Path) -> None:
    with _cache_lock:
        _cache.pop(directory, None)
