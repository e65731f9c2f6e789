"""The fact store's value types, limits and time conversions.

Times are stored as integer epoch milliseconds (UTC) and surfaced as aware ``datetime`` values.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Literal

from specwire.runtime.core.errors import StoreError
from specwire.runtime.core.fragment import RECALL_K_MAX
from specwire.runtime.core.lazy_dataclass import lazy_dataclass, lazy_methods_dataclass
from specwire.runtime.core.patterns import LazyPattern
from specwire.runtime.core.scopes import AGENT, ScopeKey

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

# A fact's key (keyed facts replace each other per scope key) and the tiers of Crewship's
# layout (``runtime.facts.tiers``); a tier note's key is its tier-relative label.
MAX_KEY_CHARS = 200
_FACT_KEY_RE = LazyPattern(r"^[^\x00-\x1f\x7f]+$")
TIERS: tuple[str, ...] = ("AGENT", "CREW", "PERSONA", "pins", "daily", "peers", "lessons")
# The largest text a keyed write may store, whatever its cap (``lessons`` has none).
MAX_KEYED_TEXT_BYTES = 64 * 1024

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MS = timedelta(milliseconds=1)


class InvalidRequestError(StoreError, ValueError):
    """The caller asked for something malformed (empty text, bad id, both selectors...).

    A ``StoreError`` (its message is safe to show to the model) and a ``ValueError``.
    """


class CapExceededError(StoreError):
    """A keyed write refused because its text would exceed ``max_bytes``; nothing was written."""

    def __init__(self, key: str, cap_bytes: int, current_size: int, projected_size: int) -> None:
        self.key = key
        self.cap_bytes = cap_bytes
        self.current_size = current_size
        self.projected_size = projected_size
        super().__init__(
            f"{key} would grow to {projected_size} bytes, over its cap of {cap_bytes} "
            f"(now {current_size} bytes)"
        )


def check_fact_key(key: str) -> str:
    if not isinstance(key, str) or not key.strip() or len(key) > MAX_KEY_CHARS:
        raise InvalidRequestError(f"a memory key is 1-{MAX_KEY_CHARS} characters")
    if not _FACT_KEY_RE.fullmatch(key):
        raise InvalidRequestError("a memory key has no control characters")
    return key


def check_tier(tier: str) -> str:
    if tier not in TIERS:
        raise InvalidRequestError(f"unknown memory tier {tier!r} (one of {', '.join(TIERS)})")
    return tier


@lazy_methods_dataclass(frozen=True)
class Provenance:
    """Where a fact came from: the session that wrote it and the tool uses that back it."""

    session_id: str | None = None
    evidence: tuple[str, ...] = ()


@lazy_dataclass(frozen=True)
class NewFactItem:
    """One fact of a ``FactStore.retain_many`` batch (the arguments of ``remember``)."""

    text: str
    tags: tuple[str, ...] = ()
    ttl_ms: int | None = None
    provenance: Provenance | None = None
    scope: ScopeKey = AGENT


@lazy_dataclass(frozen=True)
class Fact:
    """One stored fact and its metadata."""

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
    scope: ScopeKey = AGENT
    key: str | None = None
    tier: str | None = None

    @property
    def has_evidence(self) -> bool:
        return bool(self.provenance.evidence)


@lazy_dataclass(frozen=True)
class FactRecord:
    """One live fact as a provider's point read returns it (every backend, same shape)."""

    id: str
    text: str
    tags: tuple[str, ...]
    created_at: datetime
    expires_at: datetime | None
    evidence_backed: bool
    scope: ScopeKey = AGENT
    key: str | None = None
    tier: str | None = None


@lazy_dataclass(frozen=True)
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
    # Where the write was going: released, it lands in this scope key, with this key and tier.
    scope: ScopeKey = AGENT
    key: str | None = None
    tier: str | None = None


@lazy_dataclass(frozen=True)
class Tombstone:
    """Why and when a fact stopped being live (the fact row itself is never removed)."""

    kind: TombstoneKind
    at: datetime
    reason: str | None = None
    superseded_by: str | None = None


@lazy_dataclass(frozen=True)
class FactStatus:
    """A fact with its status (live, superseded, forgotten, expired) and tombstone."""

    fact: Fact
    status: Status
    # None while no tombstone was written (a live fact, or one expired but not swept yet).
    tombstone: Tombstone | None = None


@lazy_dataclass(frozen=True)
class RecallHit:
    """A fact recall found, with its score."""

    fact: Fact
    # Positive, larger is better; see ``runtime.facts.lexical.ranking``.
    score: float


@lazy_dataclass(frozen=True)
class SweepResult:
    """What a sweep did: facts tombstoned as expired, and facts still live."""

    swept: int
    live: int


def to_ms(moment: datetime) -> int:
    """Epoch milliseconds of an instant; a naive datetime is taken to be UTC."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return (moment - _EPOCH) // _MS


def from_ms(ms: int) -> datetime:
    return _EPOCH + timedelta(milliseconds=ms)
