"""Importing an export into a fact store, one rule set for every backend.

A backend hands ``import_into`` an ``ImportSink`` over one open transaction; the rules are
here, so the embedded store and PostgreSQL import alike:

- a fact keeps its id (the export's ``id``) unless the store already uses it (then it gets a
  fresh one), and its ``createdAt`` (a time after now is taken as now) and expiry;
- live facts are written oldest first; a fact is *known*, and not written again, when a live
  fact has the same normalized text or any fact has the same normalized text and the same
  ``createdAt`` (importing an export twice writes nothing the second time);
- forgotten and expired facts are written as the history they are, with their tombstone's
  time and reason (a fact whose expiry has passed is written too: it reads as expired);
- a superseded fact is written only when the fact that replaced it is imported or known, and
  is then tombstoned as superseded by it, at its tombstone's time (without one, at the
  replacement's ``createdAt``): a chain A → B → C keeps its shape;
- a fact keeps its scope key (``scope``), ``fact_key`` and ``tier``; whether it is known is
  decided within its own scope key (two people's equal facts are two facts);
- every text goes through the injection scanner: a flagged live fact is held in quarantine,
  flagged history is skipped;
- a fact that breaks the store's rules (empty text, too many tags) fails the whole import,
  with its key, and nothing is written.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Protocol

from specwire.runtime.core.ids import MEMORY_ID_RE
from specwire.runtime.core.scopes import AGENT, ScopeKey
from specwire.runtime.facts.model import InvalidRequestError, Provenance, Tombstone, to_ms
from specwire.runtime.facts.validation import NewFact
from specwire.runtime.facts.validation import reason as checked_reason


@dataclass(frozen=True)
class ImportedFact:
    """One fact of an export. ``key`` is its id there (``superseded_by`` names another key of
    the same import)."""

    key: str
    text: str
    tags: tuple[str, ...] = ()
    status: str = "live"
    created_at: datetime | None = None
    expires_at: datetime | None = None
    provenance: Provenance | None = None
    superseded_by: str | None = None
    scope: ScopeKey = AGENT
    fact_key: str | None = None
    tier: str | None = None
    # Why and when it stopped being live, as the export says (None: not said).
    tombstone: Tombstone | None = None

    @property
    def wanted_id(self) -> str | None:
        """The id to keep: the export's, when it is a memory id."""
        return self.key if MEMORY_ID_RE.match(self.key) else None


@dataclass(frozen=True)
class ImportResult:
    imported: int  # live facts written
    history: int  # superseded, forgotten and expired facts written, with their tombstones
    known: int  # already there
    quarantined: int  # live facts the injection scanner held
    skipped: int  # not imported: flagged history, a superseded fact without its replacement
    # Export key → the id of that fact in this store (written or already known).
    ids: dict[str, str] = field(default_factory=dict)


class ImportSink(Protocol):
    """One backend's writes and look-ups, inside one transaction."""

    def live_with_text(self, norm_text: str, scope: ScopeKey = AGENT) -> str | None: ...

    def with_text_created(
        self, norm_text: str, created_ms: int, scope: ScopeKey = AGENT
    ) -> str | None: ...

    def screened(self, new: NewFact) -> str | None:
        """The label of the injection rule that flags ``new``; None when clean."""
        ...

    def hold(self, new: NewFact, rule: str) -> None: ...

    def insert(self, new: NewFact, created_ms: int, wanted_id: str | None = None) -> str:
        """Write ``new``; under ``wanted_id`` when no fact or held write uses it, else under a
        fresh id. Returns the id."""
        ...

    def link_superseded(self, old_id: str, new_id: str, at_ms: int, reason: str | None) -> None: ...

    def tombstone(self, fact_id: str, kind: str, at_ms: int, reason: str | None) -> None:
        """Tombstone a fact just written as ``forgotten`` or ``expired`` history."""
        ...


HISTORY_REASON = "imported as superseded"
FORGOTTEN_REASON = "imported as forgotten"


def import_into(sink: ImportSink, facts: Sequence[ImportedFact], now_ms: int) -> ImportResult:
    ids: dict[str, str] = {}
    created_of: dict[str, int] = {}
    imported = history = known = held = 0
    live = [fact for fact in facts if fact.status == "live" and _alive(fact, now_ms)]
    ended = [
        fact
        for fact in facts
        if fact.status in ("forgotten", "expired")
        or (fact.status == "live" and not _alive(fact, now_ms))
    ]
    chained = [fact for fact in facts if fact.status == "superseded" and fact.superseded_by]
    for fact in sorted(live, key=lambda f: _created_ms(f, now_ms)):
        new, created = _new(fact, now_ms)
        existing = sink.live_with_text(new.norm_text, new.scope) or sink.with_text_created(
            new.norm_text, created, new.scope
        )
        if existing is not None:
            ids[fact.key], created_of[fact.key] = existing, created
            known += 1
            continue
        rule = sink.screened(new)
        if rule is not None:
            sink.hold(new, rule)
            held += 1
            continue
        ids[fact.key] = sink.insert(new, created, fact.wanted_id)
        created_of[fact.key] = created
        imported += 1
    for fact in sorted(ended, key=lambda f: _created_ms(f, now_ms)):
        new, created = _new(fact, now_ms)
        existing = sink.with_text_created(new.norm_text, created, new.scope)
        if existing is not None:
            ids[fact.key], created_of[fact.key] = existing, created
            known += 1
            continue
        if sink.screened(new) is not None:
            continue
        fact_id = sink.insert(new, created, fact.wanted_id)
        ending = _ending(fact, created, now_ms)
        if ending is not None:
            sink.tombstone(fact_id, *ending)
        ids[fact.key], created_of[fact.key] = fact_id, created
        history += 1
    pending = sorted(chained, key=lambda f: _created_ms(f, now_ms), reverse=True)
    progress = True
    while pending and progress:
        progress = False
        for fact in list(pending):
            head = fact.superseded_by
            if head not in ids:
                continue
            assert head is not None
            pending.remove(fact)
            progress = True
            new, created = _new(fact, now_ms)
            existing = sink.with_text_created(new.norm_text, created, new.scope)
            if existing is not None:
                ids[fact.key], created_of[fact.key] = existing, created
                known += 1
                continue
            if sink.screened(new) is not None:
                continue
            fact_id = sink.insert(new, created, fact.wanted_id)
            at: int = max(created, created_of[head])
            reason: str | None = HISTORY_REASON
            if fact.tombstone is not None and fact.tombstone.kind == "superseded":
                at, reason = to_ms(fact.tombstone.at), _reason(fact, fact.tombstone.reason)
            sink.link_superseded(fact_id, ids[head], at, reason)
            ids[fact.key], created_of[fact.key] = fact_id, created
            history += 1
    skipped = len(facts) - imported - history - known - held
    return ImportResult(imported, history, known, held, skipped, ids)


def _ending(fact: ImportedFact, created_ms: int, now_ms: int) -> tuple[str, int, str | None] | None:
    """The tombstone a forgotten or expired fact is written with (kind, time, reason); None
    where its passed expiry says it (an expired fact the export shows without a tombstone)."""
    stone = fact.tombstone
    if stone is not None and stone.kind in ("forgotten", "expired"):
        return stone.kind, to_ms(stone.at), _reason(fact, stone.reason)
    if fact.status == "forgotten":
        return "forgotten", created_ms, FORGOTTEN_REASON
    if fact.expires_at is None or to_ms(fact.expires_at) > now_ms:
        return "expired", created_ms, None  # said to be expired, though its expiry is not
    return None


def _reason(fact: ImportedFact, reason: str | None) -> str | None:
    try:
        return checked_reason(reason)
    except InvalidRequestError as exc:
        raise InvalidRequestError(f"fact {fact.key}: {exc}; nothing was imported") from None


def _created_ms(fact: ImportedFact, now_ms: int) -> int:
    return now_ms if fact.created_at is None else min(to_ms(fact.created_at), now_ms)


def _alive(fact: ImportedFact, now_ms: int) -> bool:
    return fact.expires_at is None or to_ms(fact.expires_at) > now_ms


def _new(fact: ImportedFact, now_ms: int) -> tuple[NewFact, int]:
    created = _created_ms(fact, now_ms)
    ttl = None
    if fact.expires_at is not None:
        # A superseded fact's expiry may lie before its creation in a hand-edited file: the
        # fact is history either way, so such an expiry is dropped rather than refused.
        ttl = to_ms(fact.expires_at) - created
        ttl = ttl if ttl > 0 else None
    try:
        new = NewFact(
            fact.text,
            fact.tags,
            ttl,
            fact.provenance,
            scope=fact.scope,
            key=fact.fact_key,
            tier=fact.tier,
        )
        return new, created
    except InvalidRequestError as exc:
        raise InvalidRequestError(f"fact {fact.key}: {exc}; nothing was imported") from None
