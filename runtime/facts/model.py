"""The fact store's value types, limits and time conversions.

Times are stored as integer epoch milliseconds (UTC) and surfaced as aware ``datetime`` values.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Literal

from specwire.runtime.core.errors import StoreError
from specwire.runtime.core.fragment import RECALL_K_MAX

Status = Literal["live", "expired", "superseded", "forgotten"]
TombstoneKind = Literal["superseded", "expired", "forgotten"]

# Bounds on what one fact may hold (the tools expose the same limits to the model).
MAX_TEXT_CHARS = 2000
MAX_TAGS = 8
MAX_TAG_CHARS = 64
MAX_EVIDENCE = 64
MAX_REASON_CHARS = 500
MAX_RECALL_K = RECALL_K_MAX
# A model-facing forget by query takes at most this many facts at once; more is refused (a
# one-word query must not tombstone half the store by accident).
MAX_FORGET_AT_ONCE = 10

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MS = timedelta(milliseconds=1)


class InvalidRequestError(StoreError, ValueError):
    """The caller asked for something malformed (empty text, bad id, both selectors...).

    A ``StoreError`` (its message is safe to show to the model) and a ``ValueError``.
    """


@dataclass(frozen=True)
class Provenance:
    """Where a fact came from: the session that wrote it and the tool uses that back it."""

    session_id: str | None = None
    evidence: tuple[str, ...] = ()


@dataclass(frozen=True)
class NewFactItem:
    """One fact of a ``FactStore.retain_many`` batch (the arguments of ``remember``)."""

    text: str
    tags: tuple[str, ...] = ()
    ttl_ms: int | None = None
    provenance: Provenance | None = None


@dataclass(frozen=True)
class Fact:
    id: str
    text: str
    tags: tuple[str, ...]
    created_at: datetime
    expires_at: datetime | None
    superseded_by: str | None
    provenance: Provenance
    # Set on a write the injection scanner flagged: the text was held in quarantine, not stored
    # as a fact (``FactStore``); the label of the rule that fired.
    quarantined: str | None = None

    @property
    def has_evidence(self) -> bool:
        return bool(self.provenance.evidence)


@dataclass(frozen=True)
class QuarantinedFact:
    """A write the injection scanner flagged, held apart from the facts until the owner decides.

    ``found_on`` is ``write`` (flagged when written) or ``read`` (a stored fact a later rule
    flagged when it was about to be recalled; that fact was forgotten and moved here).
    """

    id: str
    text: str
    tags: tuple[str, ...]
    created_at: datetime
    ttl_ms: int | None
    provenance: Provenance
    rule: str
    found_on: Literal["write", "read"]


@dataclass(frozen=True)
class Tombstone:
    """Why and when a fact stopped being live (the fact row itself is never removed)."""

    kind: TombstoneKind
    at: datetime
    reason: str | None = None
    superseded_by: str | None = None


@dataclass(frozen=True)
class FactStatus:
    fact: Fact
    status: Status
    # None while no tombstone was written (a live fact, or one expired but not swept yet).
    tombstone: Tombstone | None = None


@dataclass(frozen=True)
class RecallHit:
    fact: Fact
    # Positive, larger is better; see ``runtime.facts.lexical.ranking``.
    score: float


@dataclass(frozen=True)
class SweepResult:
    swept: int
    live: int


def to_ms(moment: datetime) -> int:
    """Epoch milliseconds of an instant; a naive datetime is taken to be UTC."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return (moment - _EPOCH) // _MS


def from_ms(ms: int) -> datetime:
    return _EPOCH + timedelta(milliseconds=ms)
