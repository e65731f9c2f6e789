"""IR → the memory wiring fragment: only declared memory fields, continuity as resolved."""

from __future__ import annotations

from ir.model import IrContinuity, IrMemory, IrMemoryWiki, IrSpec
from runtime.fragment import (
    ContinuityFragment,
    MemoryFactsFragment,
    MemoryWiringFragment,
    WikiFragment,
)


def lower(ir: IrSpec) -> MemoryWiringFragment:
    return MemoryWiringFragment(
        spec_name=ir.name,
        memory=_memory(ir.memory) if ir.memory is not None else None,
        continuity=_continuity(ir.continuity) if ir.continuity is not None else None,
    )


def _memory(memory: IrMemory) -> MemoryFactsFragment:
    return MemoryFactsFragment(
        enabled=memory.enabled,
        backend=memory.backend,
        embedder=memory.embedder,
        ttl_ms=memory.ttl_ms,
        auto_capture=memory.auto_capture,
        auto_capture_threshold=memory.auto_capture_threshold,
        auto_recall=memory.auto_recall,
        recall_k=memory.recall_k,
        wiki=_wiki(memory.wiki) if memory.wiki is not None else None,
    )


def _wiki(wiki: IrMemoryWiki) -> WikiFragment:
    return WikiFragment(
        enabled=wiki.enabled,
        recall_k=wiki.recall_k,
        embedder=wiki.embedder,
        auto_recall=wiki.auto_recall,
        require_sources=wiki.require_sources,
    )


def _continuity(continuity: IrContinuity) -> ContinuityFragment:
    return ContinuityFragment(
        plan=continuity.plan,
        proof=continuity.proof,
        ledger=continuity.ledger,
        handoff=continuity.handoff,
        scope=continuity.scope,
        focus_max_chars=continuity.focus_max_chars,
    )
