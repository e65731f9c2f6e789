"""The owner transfer's records (``contract.ExportedFactBody``, ``contract.HeldBody``) to and
from the store's own (``FactStatus``, ``QuarantinedFact``): one mapping for the server and the
client, so a fact crosses the wire and back unchanged."""

from __future__ import annotations

from datetime import UTC, datetime

from specwire.runtime.core.scopes import ScopeKey
from specwire.runtime.facts.model import Fact, FactStatus, Provenance, QuarantinedFact, Tombstone
from specwire.runtime.facts.providers.http import contract as wire


def fact_body(status: FactStatus) -> wire.ExportedFactBody:
    fact = status.fact
    tombstone = status.tombstone
    return wire.ExportedFactBody(
        id=fact.id,
        text=fact.text,
        tags=list(fact.tags),
        status=status.status,
        scope=fact.scope.scope,
        subject=fact.scope.subject,
        key=fact.key,
        tier=fact.tier,
        created_at=fact.created_at,
        expires_at=fact.expires_at,
        superseded_by=fact.superseded_by,
        provenance=_provenance_body(fact.provenance),
        tombstone=None
        if tombstone is None
        else wire.TombstoneBody(
            kind=tombstone.kind,
            at=tombstone.at,
            reason=tombstone.reason,
            superseded_by=tombstone.superseded_by,
        ),
    )


def fact_status(body: wire.ExportedFactBody) -> FactStatus:
    tombstone = body.tombstone
    return FactStatus(
        Fact(
            id=body.id,
            text=body.text,
            tags=tuple(body.tags),
            created_at=_utc(body.created_at),
            expires_at=None if body.expires_at is None else _utc(body.expires_at),
            superseded_by=body.superseded_by,
            provenance=_provenance(body.provenance),
            scope=ScopeKey(body.scope, body.subject),
            key=body.key,
            tier=body.tier,
        ),
        body.status,
        None
        if tombstone is None
        else Tombstone(
            tombstone.kind, _utc(tombstone.at), tombstone.reason, tombstone.superseded_by
        ),
    )


def held_body(held: QuarantinedFact) -> wire.HeldBody:
    return wire.HeldBody(
        id=held.id,
        text=held.text,
        tags=list(held.tags),
        scope=held.scope.scope,
        subject=held.scope.subject,
        key=held.key,
        tier=held.tier,
        created_at=held.created_at,
        ttl_ms=held.ttl_ms,
        provenance=_provenance_body(held.provenance),
        rule=held.rule,
        found_on=held.found_on,
    )


def held_fact(body: wire.HeldBody) -> QuarantinedFact:
    return QuarantinedFact(
        id=body.id,
        text=body.text,
        tags=tuple(body.tags),
        created_at=_utc(body.created_at),
        ttl_ms=body.ttl_ms,
        provenance=_provenance(body.provenance),
        rule=body.rule,
        found_on=body.found_on,
        scope=ScopeKey(body.scope, body.subject),
        key=body.key,
        tier=body.tier,
    )


def same_fact(held: FactStatus, given: wire.ExportedFactBody) -> bool:
    """Whether the store's fact is the one ``given`` describes (its status aside: that follows
    from the times and the tombstone, read at each side's own instant)."""
    return fact_body(held).model_copy(update={"status": given.status}) == given


def _provenance_body(provenance: Provenance) -> wire.ProvenanceBody:
    return wire.ProvenanceBody(session_id=provenance.session_id, evidence=list(provenance.evidence))


def _provenance(body: wire.ProvenanceBody) -> Provenance:
    return Provenance(body.session_id, tuple(body.evidence))


def _utc(moment: datetime) -> datetime:
    return moment.astimezone(UTC) if moment.tzinfo is not None else moment.replace(tzinfo=UTC)
