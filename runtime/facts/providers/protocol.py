"""The fact provider protocol (DESIGN §7) and the embedded local provider over ``FactStore``.

Adapted from the Crewship ``Provider`` contract: four operations plus declared capabilities,
every request validated at the boundary, append-only evolution (new optional fields and methods
only). Differences, on purpose: retain takes an explicit ``supersedes`` id instead of a
``replace|append`` mode (a plain retain always appends, so intent is still visible), forget's two
selectors are ``id`` and ``query`` (no data-subject cascade locally), and scores are squashed into
``[0, 1)`` by ``score / (1 + score)``: monotone, provider-specific, never compared across
providers.

Scopes (``runtime.core.scopes``): every retain names the scope key it writes into (default
``agent``, the behaviour before scopes), and every recall, point read and model-facing forget
names the keys it may see; a provider returns nothing outside them and never moves a fact to
another key. A **keyed** retain (``key``) replaces the live fact with that key in the same scope
key (a supersede with a tombstone, never a second copy) or, with ``mode="append"``, writes the
old text plus the new one as its replacement, in one transaction; ``max_bytes`` refuses a keyed
write whose stored text would grow past it (``CapExceededError``). Tier notes
(``runtime.facts.tiers``) are keyed facts with a ``tier``; recall returns them only when asked
for their tier, plain recall only facts without one.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Literal, Protocol, runtime_checkable

from specwire.runtime.core.clock import Clock
from specwire.runtime.core.errors import StoreError
from specwire.runtime.core.ids import MEMORY_ID_RE
from specwire.runtime.core.scopes import AGENT, ScopeKey
from specwire.runtime.facts.lexical.ranking import unit_score
from specwire.runtime.facts.model import (
    MAX_RECALL_K,
    Fact,
    FactRecord,
    InvalidRequestError,
    Provenance,
    check_fact_key,
    check_tier,
)
from specwire.runtime.facts.store import FactStore
from specwire.runtime.facts.tiers.layout import split_label


@dataclass(frozen=True)
class RetainRequest:
    text: str
    tags: tuple[str, ...] = ()
    ttl_ms: int | None = None
    provenance: Provenance | None = None
    # Replace this live fact (tombstoned, pointing at the new one) instead of appending.
    supersedes: str | None = None
    # Skip the write when a live fact in the same scope key already has the same normalized
    # text.
    if_absent: bool = False
    # The scope key the fact belongs to (its subject comes from the host, never the model). A
    # superseded fact must be in this same key: a later write never moves or widens a fact.
    scope: ScopeKey = AGENT
    # Replace the live fact with this key in the same scope key (see the module docstring).
    key: str | None = None
    # With ``key``: ``replace`` the keyed fact's text, or ``append`` to it (a new line).
    mode: Literal["replace", "append"] = "replace"
    # A tier note (``runtime.facts.tiers``): needs ``key``; plain recall never returns it.
    tier: str | None = None
    # With ``key``: refuse (``CapExceededError``) when the stored text would exceed this many
    # UTF-8 bytes; checked in the write's transaction, so concurrent appends cannot overshoot.
    max_bytes: int | None = None

    def __post_init__(self) -> None:
        if self.supersedes is not None and not MEMORY_ID_RE.match(self.supersedes):
            raise InvalidRequestError(f"supersedes is not a memory id: {self.supersedes!r}")
        if self.supersedes is not None and self.if_absent:
            raise InvalidRequestError("retain: supersedes and if_absent cannot be combined")
        if not isinstance(self.scope, ScopeKey):
            raise InvalidRequestError("retain: scope must be a ScopeKey")
        if self.mode not in ("replace", "append"):
            raise InvalidRequestError("retain: mode must be replace or append")
        if self.key is None:
            if self.mode != "replace" or self.tier is not None or self.max_bytes is not None:
                raise InvalidRequestError("retain: mode, tier and max_bytes need a key")
            return
        check_fact_key(self.key)
        if self.tier is not None:
            check_tier(self.tier)
        # A tier label (``AGENT.md``, ``peers/ana.md``) is reserved for its tier's note: a
        # plain keyed write under it would replace the note and slip past the tier's rules
        # (``lessons`` is read-only to the model, every tier has a cap).
        reserved = split_label(self.key)
        if reserved is not None and self.tier != reserved[0]:
            raise InvalidRequestError(
                f"retain: the key {self.key!r} is reserved for the {reserved[0]} tier note"
            )
        if self.supersedes is not None or self.if_absent:
            raise InvalidRequestError("retain: a keyed write replaces by key, not by id")
        if self.max_bytes is not None and (isinstance(self.max_bytes, bool) or self.max_bytes < 1):
            raise InvalidRequestError("retain: max_bytes must be a positive integer")


@dataclass(frozen=True)
class RetainResult:
    id: str
    # False when ``if_absent`` found an equal live fact (``id`` is that fact's).
    created: bool
    expires_at: datetime | None = None
    superseded: str | None = None
    # Set when the injection scanner held the text: the rule's label. Nothing was stored as a
    # fact (``created`` is True: the held write is new), and recall never returns it.
    quarantined: str | None = None
    # When ``created`` is False: the live fact's own text and tags (kept as they were).
    text: str | None = None
    tags: tuple[str, ...] | None = None
    # UTF-8 bytes of the text stored (for a keyed write: the whole text after an append).
    bytes: int = 0


def _check_visible(visible: tuple[ScopeKey, ...], what: str) -> None:
    if not visible or not all(isinstance(key, ScopeKey) for key in visible):
        raise InvalidRequestError(f"{what}: visible must name at least one scope key")


@dataclass(frozen=True)
class RecallRequest:
    query: str
    limit: int = 5
    # The scope keys the caller may see: nothing outside them is returned.
    visible: tuple[ScopeKey, ...] = (AGENT,)
    # Empty: plain facts only. Otherwise only tier notes of these tiers.
    tiers: tuple[str, ...] = ()
    # Remem's search fields (append-only). Every built-in provider honours them
    # (``recall_bounds``) and the conformance suite checks that a provider does; the router
    # enforces them again on what comes back:
    # words that widen the query (a plan's topics, a goal's title)
    topics: tuple[str, ...] = ()
    # only hits of these types (``ProviderHit.type``); empty: every type
    types: tuple[str, ...] = ()
    # the hits' texts together stay within about this many tokens (4 UTF-8 bytes a token)
    max_tokens: int | None = None
    # ``time.monotonic()`` instant after which the provider gives up (``DeadlineExceeded``)
    deadline: float | None = None
    # set by the caller to abandon the search (``DeadlineExceeded``)
    cancel: threading.Event | None = field(default=None, compare=False)
    # why the recall runs ("auto-recall", "tool", "owner"), for diagnostics only
    reason: str | None = None

    def __post_init__(self) -> None:
        if isinstance(self.limit, bool) or not 1 <= self.limit <= MAX_RECALL_K:
            raise InvalidRequestError(f"limit must be between 1 and {MAX_RECALL_K}")
        _check_visible(self.visible, "recall")
        for tier in self.tiers:
            check_tier(tier)
        if self.max_tokens is not None and (
            isinstance(self.max_tokens, bool) or self.max_tokens < 1
        ):
            raise InvalidRequestError("recall: max_tokens must be a positive integer")

    def expired(self) -> bool:
        """The caller gave up: its deadline passed or it set ``cancel``."""
        if self.cancel is not None and self.cancel.is_set():
            return True
        return self.deadline is not None and time.monotonic() >= self.deadline


@dataclass(frozen=True)
class ProviderHit:
    id: str
    text: str
    tags: tuple[str, ...]
    # In [0, 1), larger is better.
    score: float
    evidence_backed: bool
    scope: ScopeKey = AGENT
    key: str | None = None
    tier: str | None = None
    # Version 5, filled by providers that have them (a vault note) and by the router:
    # the provider the hit came from (``memory.providers`` name), why it ranked,
    # a content fingerprint (``runtime.facts.text.fingerprint``), a title and a type.
    provider: str | None = None
    reasons: tuple[str, ...] = ()
    fingerprint: str | None = None
    title: str | None = None
    type: str | None = None


@dataclass(frozen=True)
class RecallResponse:
    hits: tuple[ProviderHit, ...]


@dataclass(frozen=True)
class ReadRequest:
    """A point read: exactly one of ``id`` (that fact, if live and visible) or ``key`` (the
    live fact with that key in each visible scope key)."""

    id: str | None = None
    key: str | None = None
    visible: tuple[ScopeKey, ...] = (AGENT,)

    def __post_init__(self) -> None:
        if (self.id is None) == (self.key is None):
            raise InvalidRequestError("read: provide exactly one of `id` or `key`")
        if self.id is not None and not MEMORY_ID_RE.match(self.id):
            raise InvalidRequestError(f"read: not a memory id: {self.id!r}")
        if self.key is not None:
            check_fact_key(self.key)
        _check_visible(self.visible, "read")


@dataclass(frozen=True)
class ReadResponse:
    # Live, visible facts only, sorted by scope key; empty when there is none.
    records: tuple[FactRecord, ...]


@dataclass(frozen=True)
class ForgetRequest:
    """Exactly one selector: ``id`` (that fact only) or ``query`` (every live fact containing
    all of the query's non-stop words; see ``FactStore.forget_matching``)."""

    id: str | None = None
    query: str | None = None
    reason: str | None = None
    # With ``query``: when more live facts match than this, nothing is forgotten and the
    # request is refused (a broad query must not wipe the store). None: no cap.
    at_most: int | None = None
    # The scope keys the caller may forget in (a fact outside them is left alone, as if absent).
    # None: every key (the owner's forget).
    visible: tuple[ScopeKey, ...] | None = None

    def __post_init__(self) -> None:
        if self.at_most is not None and (isinstance(self.at_most, bool) or self.at_most < 1):
            raise InvalidRequestError("forget: at_most must be a positive integer")
        has_id = self.id is not None
        has_query = self.query is not None
        if has_id == has_query:
            raise InvalidRequestError("forget: provide exactly one of `id` or `query`")
        if self.id is not None and not MEMORY_ID_RE.match(self.id):
            raise InvalidRequestError(f"forget: not a memory id: {self.id!r}")
        if self.query is not None and not self.query.strip():
            raise InvalidRequestError("forget: query must not be empty")
        if self.visible is not None:
            _check_visible(self.visible, "forget")


@dataclass(frozen=True)
class ForgetResult:
    removed: int
    ids: tuple[str, ...] = ()
    # The forgotten facts' texts, parallel to ``ids`` (empty when a provider does not say).
    texts: tuple[str, ...] = ()


@dataclass(frozen=True)
class Health:
    ok: bool
    # Set only when not ok; never carries memory content.
    message: str | None
    checked_at: datetime


@dataclass(frozen=True)
class Capabilities:
    lexical: bool = False
    semantic: bool = False
    ttl: bool = False
    supersede: bool = False
    provenance: bool = False
    forget_by_query: bool = False
    # Forget leaves a tombstone and the data readable by operators (never a silent delete).
    tombstones: bool = False
    # GDPR-style cascade by data subject (the local store keeps no subject keys).
    subject_cascade: bool = False
    # Scope keys on retain/recall/read/forget (``runtime.core.scopes``).
    scopes: bool = False
    # Keyed retains (replace/append, max_bytes) and tier notes.
    keys: bool = False
    # ``read`` by id or key.
    point_read: bool = False
    # Remem's flags (append-only; those it shares with the above are ``lexical``,
    # ``semantic`` and ``point_read``): filters on tags/types/scopes in the query itself,
    # ``catalog()``, ``retain``, ``update``, ``forget``, session history, entities, documents
    # read from a filesystem.
    metadata_filtering: bool = False
    catalog: bool = False
    writes: bool = False
    updates: bool = False
    deletes: bool = False
    episodic_history: bool = False
    structured_entities: bool = False
    filesystem_documents: bool = False


@runtime_checkable
class FactReader(Protocol):
    """Point reads (``Capabilities.point_read``): every built-in backend offers them; a
    provider of one's own may not, so callers check the capability (like the admin protocols)."""

    def read(self, request: ReadRequest) -> ReadResponse: ...


@runtime_checkable
class FactProvider(Protocol):
    def retain(self, request: RetainRequest) -> RetainResult: ...

    def recall(self, request: RecallRequest) -> RecallResponse: ...

    def forget(self, request: ForgetRequest) -> ForgetResult: ...

    def health(self) -> Health: ...

    def capabilities(self) -> Capabilities: ...


@runtime_checkable
class ReadingFactProvider(FactProvider, FactReader, Protocol):
    """A fact provider that also offers point reads (what MemoryRead and tier notes use)."""


@dataclass(frozen=True)
class ProviderDescriptor:
    """What a provider is, for diagnostics and ``codegen check``: never a credential, a path
    outside the agent's folder or memory content."""

    # The ``memory.providers`` name (``primary`` when the spec names none).
    id: str
    # ``file``, ``postgres``, ``http``, ``markdown``, or a provider of one's own.
    kind: str
    read_only: bool = False
    description: str | None = None


@dataclass(frozen=True)
class CatalogEntry:
    """One item a provider can enumerate cheaply (a vault note, a document, a topic)."""

    id: str
    title: str
    type: str | None = None
    updated_at: datetime | None = None


@dataclass(frozen=True)
class UpdateRequest:
    """Replace a live fact's text and tags in place of a supersede (``Capabilities.updates``):
    the old text is kept as history, the id stays.

    A built-in provider keeps the old version as a fact of its own (a new id, superseded by the
    updated one with reason ``updated``: exports and migrations carry it like any superseded
    fact), screens the new text like a write (held: ``RetainResult.quarantined``, the fact
    unchanged), and treats a fact outside ``visible``, a tier note or a dead fact as unknown
    (``StoreError``); a keyed fact is written by its key (``InvalidRequestError``). The result:
    ``id`` the fact's own (a held text: the held write's, as a retain's), ``superseded`` the old
    version's id, ``created`` False (with ``text`` and ``tags``) when the text and tags were
    already these."""

    id: str
    text: str
    tags: tuple[str, ...] = ()
    visible: tuple[ScopeKey, ...] = (AGENT,)

    def __post_init__(self) -> None:
        if not MEMORY_ID_RE.match(self.id):
            raise InvalidRequestError(f"update: not a memory id: {self.id!r}")
        _check_visible(self.visible, "update")


class DeadlineExceeded(StoreError):
    """A recall's ``deadline`` passed or its ``cancel`` was set before it finished."""


@runtime_checkable
class DescribedProvider(Protocol):
    def descriptor(self) -> ProviderDescriptor: ...


@runtime_checkable
class CatalogProvider(Protocol):
    """``Capabilities.catalog``: cheaper than retrieval; its failure never disables recall."""

    def catalog(self, limit: int = 100) -> tuple[CatalogEntry, ...]: ...


@runtime_checkable
class UpdatingProvider(Protocol):
    def update(self, request: UpdateRequest) -> RetainResult: ...


@runtime_checkable
class RefreshingProvider(Protocol):
    """Re-read what changed underneath (a vault's files); called after a mutation."""

    def refresh(self) -> None: ...


@runtime_checkable
class DisposableProvider(Protocol):
    """Release connections and threads; the provider answers nothing afterwards."""

    def dispose(self) -> None: ...


LOCAL_CAPABILITIES = Capabilities(
    lexical=True,
    semantic=False,
    ttl=True,
    supersede=True,
    provenance=True,
    forget_by_query=True,
    tombstones=True,
    subject_cascade=False,
    metadata_filtering=True,
    writes=True,
    deletes=True,
)
# The embedded store's: scope keys, keyed writes and point reads too.
STORE_CAPABILITIES = replace(
    LOCAL_CAPABILITIES, scopes=True, keys=True, point_read=True, updates=True
)


def _size(text: str) -> int:
    return len(text.encode("utf-8"))


def _stored(fact: Fact) -> int:
    """UTF-8 bytes stored for ``fact`` (0 when the scanner held it)."""
    return 0 if fact.quarantined is not None else _size(fact.text)


HEALTH_DEADLINE_S = 0.2


class LocalFactProvider:
    """The embedded default provider: a thin adapter over one ``FactStore``."""

    def __init__(
        self, store: FactStore, *, now: Clock | None = None, name: str = "primary"
    ) -> None:
        self._store = store
        self._now = now if now is not None else store.clock
        self._name = name

    @property
    def store(self) -> FactStore:
        return self._store

    def retain(self, request: RetainRequest) -> RetainResult:
        store, scope = self._store, request.scope
        if request.key is not None:
            written = store.write_keyed(
                request.key,
                request.text,
                request.tags,
                scope=scope,
                mode=request.mode,
                tier=request.tier,
                max_bytes=request.max_bytes,
                ttl_ms=request.ttl_ms,
                provenance=request.provenance,
            )
            fact = written.fact
            return RetainResult(
                fact.id,
                True,
                fact.expires_at,
                written.superseded,
                fact.quarantined,
                bytes=written.bytes,
            )
        if request.supersedes is not None:
            fact = store.supersede(
                request.supersedes,
                request.text,
                request.tags,
                ttl_ms=request.ttl_ms,
                provenance=request.provenance,
                scope=scope,
            )
            if fact.quarantined is not None:
                return RetainResult(fact.id, True, fact.expires_at, None, fact.quarantined)
            return RetainResult(
                fact.id, True, fact.expires_at, request.supersedes, bytes=_size(fact.text)
            )
        if request.if_absent:
            fact, created = store.remember_if_new(
                request.text,
                request.tags,
                ttl_ms=request.ttl_ms,
                provenance=request.provenance,
                scope=scope,
            )
            if not created:
                return RetainResult(fact.id, False, fact.expires_at, text=fact.text, tags=fact.tags)
            return RetainResult(
                fact.id, created, fact.expires_at, quarantined=fact.quarantined, bytes=_stored(fact)
            )
        fact = store.remember(
            request.text,
            request.tags,
            ttl_ms=request.ttl_ms,
            provenance=request.provenance,
            scope=scope,
        )
        return RetainResult(
            fact.id, True, fact.expires_at, quarantined=fact.quarantined, bytes=_stored(fact)
        )

    def recall(self, request: RecallRequest) -> RecallResponse:
        from specwire.runtime.facts.providers.recall_bounds import (
            give_up_if_expired,
            search_text,
            wait_for_lock,
            within_request,
        )

        give_up_if_expired(request)
        if request.types:
            return RecallResponse(())  # facts carry no type: none is of the asked ones
        wait_for_lock(self._store._lock, request)
        hits = self._store.recall(
            search_text(request), request.limit, visible=request.visible, tiers=request.tiers
        )
        give_up_if_expired(request)
        return RecallResponse(
            within_request(
                request,
                (
                    ProviderHit(
                        hit.fact.id,
                        hit.fact.text,
                        hit.fact.tags,
                        unit_score(hit.score),
                        hit.fact.has_evidence,
                        hit.fact.scope,
                        hit.fact.key,
                        hit.fact.tier,
                    )
                    for hit in hits
                ),
            )
        )

    def update(self, request: UpdateRequest) -> RetainResult:
        fact, old_id = self._store.update(
            request.id, request.text, request.tags, visible=request.visible
        )
        if fact.quarantined is not None:
            return RetainResult(fact.id, True, fact.expires_at, None, fact.quarantined)
        if old_id is None:
            return RetainResult(fact.id, False, fact.expires_at, text=fact.text, tags=fact.tags)
        return RetainResult(fact.id, True, fact.expires_at, old_id, bytes=_size(fact.text))

    def descriptor(self) -> ProviderDescriptor:
        return ProviderDescriptor(self._name, "file", description="the embedded fact store")

    def read(self, request: ReadRequest) -> ReadResponse:
        facts = self._store.read(fact_id=request.id, key=request.key, visible=request.visible)
        return ReadResponse(
            tuple(
                FactRecord(
                    fact.id,
                    fact.text,
                    fact.tags,
                    fact.created_at,
                    fact.expires_at,
                    fact.has_evidence,
                    fact.scope,
                    fact.key,
                    fact.tier,
                )
                for fact in facts
            )
        )

    def forget(self, request: ForgetRequest) -> ForgetResult:
        if request.id is not None:
            forgotten = self._store.forget_id(
                request.id, reason=request.reason, visible=request.visible
            )
        else:
            assert request.query is not None  # ForgetRequest guarantees exactly one
            forgotten = self._store.forget_matching(
                request.query,
                reason=request.reason,
                at_most=request.at_most,
                visible=request.visible,
            )
        return ForgetResult(
            len(forgotten),
            tuple(fact.id for fact in forgotten),
            tuple(fact.text for fact in forgotten),
        )

    def health(self) -> Health:
        try:
            problem = self._store.health_problem(timeout_s=HEALTH_DEADLINE_S)
        except (OSError, StoreError) as exc:
            problem = f"health check failed: {exc}"
        return Health(ok=problem is None, message=problem, checked_at=self._now())

    def capabilities(self) -> Capabilities:
        return STORE_CAPABILITIES
