"""The dream steps over the fact store: TTL sweep, near-duplicates, compaction, staleness.

Every step goes through the owner's fact protocols (``facts.providers.admin``), so the
backend's rules hold (facts are never deleted nor edited; a superseded fact points at the fact
that replaced it) and the dream runs on every backend that offers them (the file store,
PostgreSQL). Compaction is the file store's own upkeep; elsewhere it counts 0.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Protocol, runtime_checkable

from specwire.runtime.dream.duplicates import group_duplicates
from specwire.runtime.dream.outcome import FactCounts
from specwire.runtime.dream.settings import MAX_LISTED_STALE, DreamSettings
from specwire.runtime.facts.model import Fact
from specwire.runtime.facts.providers.admin import FactAdmin, FactLister, FactListing, FactSweeper

DUPLICATE_REASON = "dream: near-duplicate of a surviving fact"


class DreamFacts(FactLister, FactAdmin, FactSweeper, Protocol):
    """What the fact steps need of a backend."""


@runtime_checkable
class FactCompactor(Protocol):
    def compact(self) -> int: ...


@dataclass(frozen=True)
class FactSteps:
    counts: FactCounts
    stale_ids: tuple[str, ...]  # the first ``MAX_LISTED_STALE``, oldest first


def live_facts(store: FactLister) -> list[Fact]:
    return [status.fact for status in store.list_facts(FactListing(status="live"))]


def consolidate_duplicates(store: DreamFacts, threshold: float) -> tuple[int, int, int]:
    """Fold each group of near-duplicates into its survivor; (groups, superseded, merged)."""
    groups = group_duplicates(live_facts(store), threshold)
    superseded = merged = 0
    for group in groups:
        ids = [fact.id for fact in group.duplicates]
        target = store.consolidate(group.survivor.id, ids, reason=DUPLICATE_REASON)
        superseded += len(ids)
        if target.id != group.survivor.id:
            merged += 1
    return len(groups), superseded, merged


def stale_facts(facts: list[Fact], now: datetime, days: int) -> list[Fact]:
    cutoff = now - timedelta(days=days)
    return sorted((f for f in facts if f.created_at < cutoff), key=lambda f: f.created_at)


def run_fact_steps(store: DreamFacts, settings: DreamSettings, now: datetime) -> FactSteps:
    swept = store.sweep_expired().swept
    groups, superseded, merged = consolidate_duplicates(store, settings.near_duplicate_jaccard)
    frames = store.compact() if isinstance(store, FactCompactor) else 0
    live = live_facts(store)
    stale = stale_facts(live, now, settings.fact_stale_after_days)
    counts = FactCounts(swept=swept, duplicate_groups=groups, superseded=superseded)
    counts = replace(counts, merged=merged, compacted_frames=frames)
    counts = replace(counts, stale=len(stale), live=len(live))
    return FactSteps(counts, tuple(f.id for f in stale[:MAX_LISTED_STALE]))
