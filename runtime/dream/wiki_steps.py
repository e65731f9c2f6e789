"""The dream step over the wiki: articles not updated within the staleness age are listed.

Read-only on purpose. The wiki's signals (``verified``, ``confidence``) are not lowered for
age: an article carries no ``verifiedAt``, so "not updated in 30 days" cannot tell an article
nobody checked from one a person verified yesterday; flipping ``verified`` would undo that.
The stale slugs go to the dream state (and ``codegen dream status``) instead.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from specwire.runtime.dream.outcome import WikiCounts
from specwire.runtime.dream.settings import MAX_LISTED_STALE
from specwire.runtime.wiki.article import Article
from specwire.runtime.wiki.store import WikiStore


@dataclass(frozen=True)
class WikiSteps:
    counts: WikiCounts
    stale_slugs: tuple[str, ...]  # the first ``MAX_LISTED_STALE``, least recently updated first


def _updated(article: Article) -> datetime | None:
    stamp = article.updated_at or article.created_at
    try:
        moment = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment if moment.tzinfo is not None else None


def run_wiki_steps(store: WikiStore, now: datetime, stale_after_days: int) -> WikiSteps:
    snapshot = store.snapshot()
    cutoff = now - timedelta(days=stale_after_days)
    stale: list[tuple[datetime, str]] = []
    for slug, article in snapshot.live.items():  # archived articles are not knowledge in use
        updated = _updated(article)
        # No readable date: as old as it gets.
        if updated is None or updated < cutoff:
            stale.append((updated or datetime.min.replace(tzinfo=now.tzinfo), slug))
    stale.sort()
    counts = WikiCounts(
        articles=len(snapshot.articles), stale=len(stale), damaged=len(snapshot.damaged)
    )
    return WikiSteps(counts, tuple(slug for _, slug in stale[:MAX_LISTED_STALE]))
