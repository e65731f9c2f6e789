"""Reading the wiki: recall with one-hop link expansion, keyword and semantic search, listing,
related articles, statistics. Pure functions of a ``WikiSnapshot`` (and the optional vectors).

Recall: the primary ranking is BM25 (ties by slug), or with an embedder the reciprocal-rank
fusion (k = 60) of BM25 and cosine; each primary hit gets ``1/(60 + rank)``. The top-k primary
hits are seeds: an article linked from or to a seed gets an extra ``0.5/(60 + best seed rank)``
vote, so a neighbour a query never mentions still surfaces (``via: "link"``). Archived articles
are never recalled.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Final, Literal

from specwire.runtime.core.lazy_dataclass import lazy_dataclass
from specwire.runtime.wiki.article import Article
from specwire.runtime.wiki.ranking import RRF_K, rrf
from specwire.runtime.wiki.semantic import VectorCache
from specwire.runtime.wiki.snapshot import WikiSnapshot

LINK_VOTE: Final = 0.5
SEARCH_LIMIT: Final = 20
RELATED_LIMIT: Final = 10
SortKey = Literal["updated", "created", "title", "relevance", "popular", "trending"]
SortOrder = Literal["asc", "desc"]


@lazy_dataclass(frozen=True)
class Hit:
    """An article a search found, its score and how (a match or a link)."""

    article: Article
    score: float
    via: Literal["match", "link"] = "match"


def primary_ranking(
    snap: WikiSnapshot, query: str, vectors: VectorCache | None, *, live_only: bool = True
) -> dict[str, float]:
    pool = snap.live if live_only else snap.articles
    allowed = None if len(pool) == len(snap.articles) else frozenset(pool)
    keyword = [slug for slug, _ in snap.index.rank(query, allowed=allowed)]
    rankings = [keyword]
    if vectors is not None:
        rankings.append([slug for slug, _ in vectors.rank(query, pool)])
    return rrf(rankings)


def recall(snap: WikiSnapshot, query: str, k: int, vectors: VectorCache | None) -> list[Hit]:
    live = snap.live
    scores = primary_ranking(snap, query, vectors)
    order = sorted(scores, key=lambda slug: (-scores[slug], slug))
    via: dict[str, Literal["match", "link"]] = dict.fromkeys(order, "match")
    best_seed: dict[str, int] = {}
    for rank, seed in enumerate(order[:k], start=1):
        for neighbour in snap.neighbours(seed):
            if neighbour in live and neighbour not in best_seed:
                best_seed[neighbour] = rank
    for neighbour, rank in best_seed.items():
        scores[neighbour] = scores.get(neighbour, 0.0) + LINK_VOTE / (RRF_K + rank)
        via.setdefault(neighbour, "link")
    ranked = sorted(scores, key=lambda slug: (-scores[slug], slug))[:k]
    return [Hit(live[slug], scores[slug], via[slug]) for slug in ranked]


def search(snap: WikiSnapshot, query: str, limit: int = SEARCH_LIMIT) -> list[Hit]:
    """Keyword (BM25) search over every article, archived ones included."""
    return [Hit(snap.articles[slug], score) for slug, score in snap.index.rank(query)[:limit]]


def semantic_search(
    snap: WikiSnapshot, query: str, limit: int, min_score: float, vectors: VectorCache
) -> list[Hit]:
    ranked = vectors.rank(query, snap.live)
    return [Hit(snap.articles[s], score) for s, score in ranked if score >= min_score][:limit]


@lazy_dataclass(frozen=True)
class ListQuery:
    """What a wiki listing filters and sorts by."""

    query: str | None = None
    tags: Sequence[str] = ()
    category: str | None = None
    status: str | None = None
    sort: SortKey = "updated"
    order: SortOrder = "asc"
    limit: int = 25


def list_articles(snap: WikiSnapshot, ask: ListQuery) -> tuple[list[Article], list[str]]:
    """Matching articles, sorted (default: least recently updated first), and notes on what
    could not be honoured."""
    notes: list[str] = []
    pool = list(snap.articles.values())
    relevance: dict[str, float] = {}
    if ask.query:
        relevance = dict(snap.index.rank(ask.query))
        pool = [a for a in pool if a.slug in relevance]
    if ask.tags:
        pool = [a for a in pool if all(tag in a.tags for tag in ask.tags)]
    if ask.category:
        pool = [a for a in pool if a.category == ask.category]
    if ask.status:
        pool = [a for a in pool if a.status == ask.status]
    sort = ask.sort
    if sort in ("popular", "trending"):
        notes.append(f'sort "{sort}" is not tracked by this wiki — sorted by updated instead')
        sort = "updated"
    if sort == "relevance" and not ask.query:
        notes.append('sort "relevance" needs a query — sorted by updated instead')
        sort = "updated"
    keys = {
        "updated": lambda a: (a.updated_at, a.slug),
        "created": lambda a: (a.created_at, a.slug),
        "title": lambda a: (a.title.casefold(), a.slug),
        "relevance": lambda a: (relevance.get(a.slug, 0.0), a.slug),
    }
    pool.sort(key=keys[sort], reverse=ask.order == "desc")
    return pool[: ask.limit], notes


def related(
    snap: WikiSnapshot, article: Article, vectors: VectorCache | None, limit: int = RELATED_LIMIT
) -> list[Hit]:
    """Articles scored by shared tags + 2 · link edges (each direction counted) + cosine."""
    hits: list[Hit] = []
    tags = set(article.tags)
    for other in snap.articles.values():
        if other.slug == article.slug:
            continue
        edges = (other.slug in article.links) + (article.slug in other.links)
        score = float(len(tags & set(other.tags)) + 2 * edges)
        if vectors is not None:
            score += vectors.similarity(article, other)
        if score > 0:
            hits.append(Hit(other, score, "link" if edges else "match"))
    hits.sort(key=lambda hit: (-hit.score, hit.article.slug))
    return hits[:limit]


@lazy_dataclass(frozen=True)
class WikiStats:
    """Counts over the wiki's articles."""

    articles: int
    by_status: dict[str, int]
    prior_versions: int
    unique_tags: int
    verified: int
    average_confidence: float
    links: int
    damaged: int


def stats(snap: WikiSnapshot, prior_versions: int) -> WikiStats:
    articles = list(snap.articles.values())
    confidence = sum(a.confidence for a in articles) / len(articles) if articles else 0.0
    return WikiStats(
        articles=len(articles),
        by_status=dict(sorted(Counter(a.status for a in articles).items())),
        prior_versions=prior_versions,
        unique_tags=len({tag for a in articles for tag in a.tags}),
        verified=sum(1 for a in articles if a.verified),
        average_confidence=round(confidence, 3),
        links=sum(len(a.links) for a in articles),
        damaged=len(snap.damaged),
    )
