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
from dataclasses import field, replace
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from specwire.runtime.core.clock import Clock
from specwire.runtime.core.errors import StoreError
from specwire.runtime.core.lazy_dataclass import lazy_dataclass, lazy_methods_dataclass
from specwire.runtime.core.scopes import AGENT, ScopeKey
from specwire.runtime.facts.lexical.ranking import unit_score
from specwire.runtime.facts.model import (
    MAX_RECALL_K,
    Fact,
    FactRecord,
    InvalidRequestError,
    check_tier,
)

if TYPE_CHECKING:
    from specwire.runtime.facts.providers.operations import CatalogEntry as CatalogEntry
    from specwire.runtime.facts.providers.operations import ForgetRequest as ForgetRequest
    from specwire.runtime.facts.providers.operations import ForgetResult as ForgetResult
    from specwire.runtime.facts.providers.operations import Health as Health
    from specwire.runtime.facts.providers.operations import (
        ProviderDescriptor as ProviderDescriptor,
    )
    from specwire.runtime.facts.providers.operations import ReadRequest as ReadRequest
    from specwire.runtime.facts.providers.operations import ReadResponse as ReadResponse
    from specwire.runtime.facts.providers.operations import RetainRequest as RetainRequest
    from specwire.runtime.facts.providers.operations import RetainResult as RetainResult
    from specwire.runtime.facts.providers.operations import UpdateRequest as UpdateRequest
    from specwire.runtime.facts.store import FactStore

# Defined in ``operations`` (see its docstring) and named here, loaded on first use.
_OPERATIONS = frozenset(
    {
        "CatalogEntry",
        "ForgetRequest",
        "ForgetResult",
        "Health",
        "ProviderDescriptor",
        "ReadRequest",
        "ReadResponse",
        "RetainRequest",
        "RetainResult",
        "UpdateRequest",
    }
)


def __getattr__(name: str) -> Any:
    if name not in _OPERATIONS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from specwire.runtime.facts.providers import operations

    value = getattr(operations, name)
    globals()[name] = value
    return value


def check_visible(visible: tuple[ScopeKey, ...], what: str) -> None:
    if not visible or not all(isinstance(key, ScopeKey) for key in visible):
        raise InvalidRequestError(f"{what}: visible must name at least one scope key")


@lazy_methods_dataclass(frozen=True)
class RecallRequest:
    """A recall: the query, how many hits, and the scope keys it may see."""

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
        check_visible(self.visible, "recall")
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


@lazy_dataclass(frozen=True)
class ProviderHit:
    """A fact recall returned, scored in ``[0, 1)``."""

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


@lazy_methods_dataclass(frozen=True)
class RecallResponse:
    """The hits of a recall, best first."""

    hits: tuple[ProviderHit, ...]


@lazy_methods_dataclass(frozen=True)
class Capabilities:
    """What a provider supports beyond the four operations."""

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
        from specwire.runtime.facts.providers.operations import RetainResult

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
        from specwire.runtime.facts.providers.operations import RetainResult

        fact, old_id = self._store.update(
            request.id, request.text, request.tags, visible=request.visible
        )
        if fact.quarantined is not None:
            return RetainResult(fact.id, True, fact.expires_at, None, fact.quarantined)
        if old_id is None:
            return RetainResult(fact.id, False, fact.expires_at, text=fact.text, tags=fact.tags)
        return RetainResult(fact.id, True, fact.expires_at, old_id, bytes=_size(fact.text))

    def descriptor(self) -> ProviderDescriptor:
        from specwire.runtime.facts.providers.operations import ProviderDescriptor

        return ProviderDescriptor(self._name, "file", description="the embedded fact store")

    def read(self, request: ReadRequest) -> ReadResponse:
        from specwire.runtime.facts.providers.operations import ReadResponse

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
        from specwire.runtime.facts.providers.operations import ForgetResult

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
        from specwire.runtime.facts.providers.operations import Health

        try:
            problem = self._store.health_problem(timeout_s=HEALTH_DEADLINE_S)
        except (OSError, StoreError) as exc:
            problem = f"health check failed: {exc}"
        return Health(ok=problem is None, message=problem, checked_at=self._now())

    def capabilities(self) -> Capabilities:
        return STORE_CAPABILITIES
