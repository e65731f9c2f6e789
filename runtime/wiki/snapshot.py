"""What the wiki holds right now, read once per change: parsed articles, damaged files, the
BM25 index and the link graph.

Reading is incremental: a query re-reads, re-parses and re-tokenizes only the article files
that changed since the last look, in this process or any other (a person's edit included),
found by their stamps (inode, size, mtime). Stat-ing every file costs milliseconds per thousand
articles, so while the folder's own stamp is unchanged (every write here renames a file into
it) the file stamps are re-checked at most every ``rescan_s`` seconds (``RESCAN_S`` unless the
store says otherwise): an in-place edit by a person is seen within that time. The parsed state
is shared by every store instance on the same folder in this process — per-turn hosts open a
store every turn — and bounded (least recently used folders out first).
"""

from __future__ import annotations

import threading
import time
from collections import Counter, OrderedDict
from collections.abc import Mapping
from dataclasses import field
from pathlib import Path
from typing import TYPE_CHECKING, Final

from specwire.runtime.core.lazy_dataclass import lazy_dataclass, lazy_methods_dataclass
from specwire.runtime.wiki.article import Article, DamagedArticle, parse_article
from specwire.runtime.wiki.folder import Stamp, UnreadableFile
from specwire.runtime.wiki.ranking import Bm25Index, term_counts
from specwire.runtime.wiki.screening import screen_article

if TYPE_CHECKING:
    from specwire.runtime.wiki.volume_folder import AnyWikiFolder

MAX_CACHED_FOLDERS: Final = 64
RESCAN_S: float = 1.0


def contextual_text(article: Article) -> str:
    """What keyword and semantic ranking read: title, tags, body."""
    tags = f"\n[tags: {', '.join(article.tags)}]" if article.tags else ""
    return f"{article.title}{tags}\n\n{article.body}"


@lazy_methods_dataclass(frozen=True)
class WikiSnapshot:
    """The wiki's articles and their search index, as of one scan."""

    articles: Mapping[str, Article]
    # the articles recall may return (every status but archived)
    live: Mapping[str, Article]
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


@lazy_dataclass(frozen=True)
class _Parsed:
    """A parsed article and its terms."""

    article: Article
    terms: Counter[str]


@lazy_methods_dataclass
class _Cached:
    """The last scan of a wiki folder, reused while its files' stamps hold."""

    stamps: dict[str, Stamp] = field(default_factory=dict)
    parsed: dict[str, _Parsed | str] = field(default_factory=dict)
    snapshot: WikiSnapshot | None = None
    folder_stamp: Stamp | None = None
    scanned_at: float = 0.0


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


def _parse(slug: str, text: str | UnreadableFile) -> _Parsed | str:
    if isinstance(text, UnreadableFile):
        return text.reason
    try:
        article = parse_article(text, expected_slug=slug)
    except DamagedArticle as exc:
        return str(exc)
    flagged = screen_article(article)
    if flagged is not None:
        return flagged
    return _Parsed(article, term_counts(contextual_text(article)))


def load_snapshot(folder: AnyWikiFolder, *, rescan_s: float = RESCAN_S) -> WikiSnapshot:
    cached = _entry(folder.directory)
    folder_stamp = folder.folder_stamp()
    started = time.monotonic()
    with _cache_lock:
        recent = started - cached.scanned_at < rescan_s
        if cached.snapshot is not None and folder_stamp == cached.folder_stamp and recent:
            return cached.snapshot
    stamps = folder.scan()
    with _cache_lock:
        cached.folder_stamp, cached.scanned_at = folder_stamp, started
        if cached.snapshot is not None and cached.stamps == stamps:
            return cached.snapshot
        previous_stamps, previous = dict(cached.stamps), dict(cached.parsed)
        # taken with ``previous``: the index those parsed articles were indexed into
        old = cached.snapshot.index if cached.snapshot is not None else None
    unchanged = {s for s, stamp in stamps.items() if previous_stamps.get(s) == stamp}
    texts = folder.read_articles(sorted(set(stamps) - unchanged))
    parsed = {slug: previous[slug] for slug in unchanged}
    parsed.update((slug, _parse(slug, text)) for slug, text in texts.items())
    changed = frozenset((set(previous) ^ set(parsed)) | set(texts))
    snapshot = _build(parsed, old, changed)
    with _cache_lock:
        cached.stamps = {slug: stamps[slug] for slug in parsed}
        cached.parsed, cached.snapshot = parsed, snapshot
    return snapshot


def _build(
    parsed: Mapping[str, _Parsed | str], previous: Bm25Index | None, changed: frozenset[str]
) -> WikiSnapshot:
    ordered = sorted(parsed.items())
    articles = {slug: p.article for slug, p in ordered if isinstance(p, _Parsed)}
    damaged = {slug: why for slug, why in ordered if isinstance(why, str)}
    backlinks: dict[str, list[str]] = {}
    for slug, article in articles.items():
        for target in article.links:
            backlinks.setdefault(target, []).append(slug)
    terms = {slug: p.terms for slug, p in ordered if isinstance(p, _Parsed)}
    index = Bm25Index(terms, previous, changed)
    return WikiSnapshot(
        articles=articles,
        live={slug: a for slug, a in articles.items() if a.status != "archived"},
        damaged=damaged,
        index=index,
        backlinks={slug: tuple(sources) for slug, sources in backlinks.items()},
    )


def mark_changed(directory: Path) -> None:
    """This process wrote into ``directory``: look at every file's stamp on the next read
    (the folder's own mtime is too coarse to tell two quick writes apart)."""
    with _cache_lock:
        cached = _cache.get(directory)
        if cached is not None:
            cached.scanned_at = 0.0


def forget_cached(directory: Path) -> None:
    with _cache_lock:
        _cache.pop(directory, None)
