"""The provider protocol's requests and results beyond recall: retain, point read, forget and
update, a provider's health, descriptor and catalog entries.

``runtime.facts.providers.protocol`` names them too (and is where callers import them from); they
live here so that a bundle's first prompt, which at most recalls, does not create them: the
protocol module loads this one on the first use of one of its names.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from specwire.runtime.core.ids import MEMORY_ID_RE
from specwire.runtime.core.scopes import AGENT, ScopeKey
from specwire.runtime.facts.model import (
    FactRecord,
    InvalidRequestError,
    Provenance,
    check_fact_key,
    check_tier,
)
from specwire.runtime.facts.providers.protocol import check_visible


@dataclass(frozen=True)
class RetainRequest:
    """A write through the provider protocol (see the module docstring for keys)."""

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
        from specwire.runtime.facts.tiers.layout import split_label

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
    """What a retain wrote: the fact's id, or the rule that held it."""

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
        check_visible(self.visible, "read")


@dataclass(frozen=True)
class ReadResponse:
    """What a point read found."""

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
            check_visible(self.visible, "forget")


@dataclass(frozen=True)
class ForgetResult:
    """What a forget removed."""

    removed: int
    ids: tuple[str, ...] = ()
    # The forgotten facts' texts, parallel to ``ids`` (empty when a provider does not say).
    texts: tuple[str, ...] = ()


@dataclass(frozen=True)
class Health:
    """Whether a provider answers, and when that was checked."""

    ok: bool
    # Set only when not ok; never carries memory content.
    message: str | None
    checked_at: datetime


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
        check_visible(self.visible, "update")
