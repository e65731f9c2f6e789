"""Restoring facts exactly as another store holds them, one rule set for every backend.

``codegen memory migrate`` moves a store's facts to another backend. Unlike an import (which
merges an export into a store: ``runtime.facts.importing``), a restore writes each fact as it
is: its id, ``createdAt`` and expiry, tags, provenance, scope key, key and tier, its tombstone
(kind, time, reason) and its supersede link; a held write keeps its id, rule, ``foundOn`` and
time. Nothing is screened again (the source screened it when it was written; recall screens
what it returns on every backend) and nothing is merged by text.

Order matters where a backend checks references (the file store's foreign keys): a fact is
written after the fact that replaced it, so ``restore_order`` puts the heads of supersede
chains first. A backend writes one batch per transaction and skips the ids it already holds,
so a restore cut short and run again finishes the job, and a second run writes nothing.
"""

from __future__ import annotations

from collections.abc import Sequence

from specwire.runtime.core.errors import StoreError
from specwire.runtime.facts.model import Fact, FactStatus, QuarantinedFact, to_ms
from specwire.runtime.facts.validation import NewFact, memory_id


class RestoreError(StoreError):
    """The facts cannot be restored as they are (a broken supersede chain, an id taken by a
    fact outside the store's scope): one line, and the batch was not written."""


def restore_order(statuses: Sequence[FactStatus]) -> list[FactStatus]:
    """``statuses`` with every fact after the fact that superseded it (heads first, then
    each link of a chain in turn; otherwise in the order given)."""
    by_id = {status.fact.id: status for status in statuses}
    depth: dict[str, int] = {}
    for status in statuses:
        chain: list[str] = []
        current: str | None = status.fact.id
        while current is not None and current not in depth:
            if current in chain:
                raise RestoreError(f"fact {current}: its supersede links form a loop")
            chain.append(current)
            head = replaced_by(by_id[current])
            if head is not None and head not in by_id:
                raise RestoreError(
                    f"fact {current} is superseded by {head}, which is not among the facts"
                )
            current = head
        base = -1 if current is None else depth[current]
        for fact_id in reversed(chain):
            base += 1
            depth[fact_id] = base
    ranked = sorted(enumerate(statuses), key=lambda item: (depth[item[1].fact.id], item[0]))
    return [status for _, status in ranked]


def replaced_by(status: FactStatus) -> str | None:
    """The id of the fact that superseded this one (None: it was not superseded)."""
    if status.fact.superseded_by is not None:
        return status.fact.superseded_by
    tombstone = status.tombstone
    return None if tombstone is None else tombstone.superseded_by


def new_fact(fact: Fact) -> NewFact:
    """The fact's fields through the rules every write obeys (``validation.NewFact``)."""
    memory_id(fact.id)
    ttl = None if fact.expires_at is None else to_ms(fact.expires_at) - to_ms(fact.created_at)
    try:
        return NewFact(
            fact.text,
            fact.tags,
            ttl,
            fact.provenance,
            scope=fact.scope,
            key=fact.key,
            tier=fact.tier,
        )
    except StoreError as exc:
        raise RestoreError(f"fact {fact.id}: {exc}") from None


def new_held(held: QuarantinedFact) -> NewFact:
    """A held write's fields through the same rules (its text is kept as it was held)."""
    memory_id(held.id)
    try:
        return NewFact(
            held.text,
            held.tags,
            held.ttl_ms,
            held.provenance,
            scope=held.scope,
            key=held.key,
            tier=held.tier,
        )
    except StoreError as exc:
        raise RestoreError(f"held write {held.id}: {exc}") from None
