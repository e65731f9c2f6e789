"""The owner's fact operations, as small capability-scoped protocols beside ``FactProvider``.

The four-operation provider protocol is what an agent needs; the owner's commands
(``codegen memory``), the dream and the memory service need more, and a backend implements
each of these only when it can:

``FactLister``      every fact with its status, filtered and paged; one fact by id.
``FactAdmin``       tombstone one fact (forget), fold near-duplicates into a survivor.
``FactExporter``    every fact ever written, oldest first (history included).
``FactImporter``    facts from an export, keeping their ``createdAt`` and supersede chains.
``FactRestorer``    facts and held writes exactly as another store holds them (ids, times,
                   tombstones, links: ``runtime.facts.restoring``), for ``codegen memory
                   migrate``.
``FactSweeper``     tombstone the facts whose TTL has passed.
``QuarantineReader`` the writes the injection scanner held.
``FactPager``       one page of facts, newest first, after a cursor (keyset paging: the
                   owner's console on a store of millions of facts).

Listing, export and the quarantine take a ``FactFilter`` (``where``): the scope keys
(``runtime.core.scopes``) the owner asks about, e.g. one person's ``user`` facts for
``codegen memory erase --user``. The default, ``EVERY_KEY``, is every fact of every key.

The embedded store (``providers.local_admin.LocalFactAdmin``) and PostgreSQL
(``providers.postgres.provider.PostgresFactProvider``) implement all of them; the HTTP memory
contract carries none (``missing`` says so in one line). Callers check with ``isinstance``
(the protocols are ``runtime_checkable``) and refuse with ``missing``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, Protocol, runtime_checkable

from specwire.runtime.core.errors import StoreError
from specwire.runtime.core.scopes import PERSONAL_SCOPES, SCOPES, SUBJECT_RE, Scope, ScopeKey
from specwire.runtime.facts.importing import ImportedFact, ImportResult
from specwire.runtime.facts.model import (
    Fact,
    FactStatus,
    InvalidRequestError,
    QuarantinedFact,
    SweepResult,
)

__all__ = [
    "EVERY_KEY",
    "FactAdmin",
    "FactExporter",
    "FactFilter",
    "FactImporter",
    "FactListing",
    "FactRestorer",
    "FactLister",
    "FactPage",
    "FactPager",
    "FactSweeper",
    "ImportResult",
    "ImportedFact",
    "QuarantineReader",
    "UnsupportedOperation",
    "missing",
]

ListStatus = Literal["live", "expired", "superseded", "forgotten", "all"]
LIST_STATUSES: tuple[ListStatus, ...] = ("live", "expired", "superseded", "forgotten", "all")
# A page holds at most this many facts (``FactListing.limit``).
MAX_PAGE = 10_000


@dataclass(frozen=True)
class FactListing:
    """Which facts ``list_facts`` returns: by status, tag and text (case-insensitive
    substring), oldest first, ``limit`` of them from ``offset`` on (None: all)."""

    status: ListStatus = "live"
    tag: str | None = None
    text: str | None = None
    offset: int = 0
    limit: int | None = None

    def __post_init__(self) -> None:
        if self.status not in LIST_STATUSES:
            raise InvalidRequestError(f"list: unknown status {self.status!r}")
        if isinstance(self.offset, bool) or self.offset < 0:
            raise InvalidRequestError("list: offset must be 0 or more")
        if self.limit is not None and (
            isinstance(self.limit, bool) or not 1 <= self.limit <= MAX_PAGE
        ):
            raise InvalidRequestError(f"list: limit must be between 1 and {MAX_PAGE}")

    def admits(self, status: FactStatus) -> bool:
        """Whether ``status`` passes the filters (paging aside)."""
        fact = status.fact
        return (
            (self.status == "all" or status.status == self.status)
            and (self.tag is None or self.tag in fact.tags)
            and (self.text is None or self.text.casefold() in fact.text.casefold())
        )


@dataclass(frozen=True)
class FactFilter:
    """Which scope keys an owner's operation covers.

    ``scopes``: only keys of these scopes (None: every scope). ``subject``: only keys naming
    this subject (a Slack user id, a conversation key, a role), so ``agent`` and ``crew`` facts,
    which name none, never match it (None: any subject, or none). Both set: e.g. the ``user``
    key of one person.
    """

    scopes: tuple[Scope, ...] | None = None
    subject: str | None = None

    def __post_init__(self) -> None:
        if self.scopes is not None:
            if not isinstance(self.scopes, tuple) or not self.scopes:
                raise InvalidRequestError("filter: scopes must name at least one scope")
            for scope in self.scopes:
                if scope not in SCOPES:
                    raise InvalidRequestError(
                        f"filter: unknown memory scope {scope!r} (one of {', '.join(SCOPES)})"
                    )
        if self.subject is not None:
            if not isinstance(self.subject, str) or not SUBJECT_RE.fullmatch(self.subject):
                raise InvalidRequestError("filter: the subject is not a valid subject id")
            if self.scopes is not None and PERSONAL_SCOPES.isdisjoint(self.scopes):
                raise InvalidRequestError(
                    "filter: a subject needs a scope that has one (user, conversation, role)"
                )

    @property
    def everything(self) -> bool:
        return self.scopes is None and self.subject is None

    def admits_key(self, key: ScopeKey) -> bool:
        return (self.scopes is None or key.scope in self.scopes) and (
            self.subject is None or key.subject == self.subject
        )

    def admits(self, fact: Fact | QuarantinedFact) -> bool:
        return self.admits_key(fact.scope)


EVERY_KEY = FactFilter()


@runtime_checkable
class FactLister(Protocol):
    def list_facts(
        self, listing: FactListing, where: FactFilter = EVERY_KEY
    ) -> list[FactStatus]: ...

    def get_fact(self, fact_id: str) -> FactStatus | None: ...


@dataclass(frozen=True)
class FactPage:
    """Which page ``page_facts`` returns: facts of ``status`` with ``tag`` and ``text``
    (case-insensitive substring), newest first, ``limit`` of them older than the fact
    ``before`` (None: from the newest)."""

    status: ListStatus = "live"
    tag: str | None = None
    text: str | None = None
    before: str | None = None
    limit: int = 50

    def __post_init__(self) -> None:
        if self.status not in LIST_STATUSES:
            raise InvalidRequestError(f"page: unknown status {self.status!r}")
        if isinstance(self.limit, bool) or not 1 <= self.limit <= MAX_PAGE:
            raise InvalidRequestError(f"page: limit must be between 1 and {MAX_PAGE}")


@runtime_checkable
class FactPager(Protocol):
    def page_facts(self, page: FactPage, where: FactFilter = EVERY_KEY) -> list[FactStatus]:
        """Keyset paging, newest first: the cost of a page is the rows it reads."""
        ...


@runtime_checkable
class FactAdmin(Protocol):
    def tombstone(self, fact_id: str, *, reason: str | None = None) -> Fact | None:
        """Forget that live fact (a ``forgotten`` tombstone); None when it is not live."""
        ...

    def consolidate(
        self, survivor_id: str, duplicate_ids: Sequence[str], *, reason: str | None = None
    ) -> Fact:
        """Fold live duplicates into the survivor (``FactStore.consolidate``'s rules)."""
        ...


@runtime_checkable
class FactExporter(Protocol):
    def export_facts(self, where: FactFilter = EVERY_KEY) -> list[FactStatus]: ...


@runtime_checkable
class FactImporter(Protocol):
    def import_facts(self, facts: Sequence[ImportedFact]) -> ImportResult: ...


@runtime_checkable
class FactRestorer(Protocol):
    def restore_facts(self, statuses: Sequence[FactStatus]) -> int:
        """Write the facts this store lacks exactly as given, heads of supersede chains first
        (``restoring.restore_order``), in one transaction; returns how many were written."""
        ...

    def restore_quarantined(self, held: Sequence[QuarantinedFact]) -> int:
        """Hold the writes this store lacks exactly as given, in one transaction; returns how
        many were written."""
        ...


@runtime_checkable
class FactSweeper(Protocol):
    def sweep_expired(self) -> SweepResult: ...


@runtime_checkable
class QuarantineReader(Protocol):
    def quarantined(self, where: FactFilter = EVERY_KEY) -> list[QuarantinedFact]: ...

    def quarantined_by_id(self, fact_id: str) -> QuarantinedFact | None: ...


@runtime_checkable
class QuarantineKeeper(Protocol):
    """The owner's decisions on a held write: release it as a live fact, or delete it."""

    def quarantined_by_id(self, fact_id: str) -> QuarantinedFact | None: ...

    def release(self, fact_id: str) -> Fact:
        """Store the held write as a live fact, unscreened (``FactStore.release``'s rules)."""
        ...

    def drop_quarantined(self, fact_id: str) -> bool:
        """Delete the held write for good; False when there is none."""
        ...


class UnsupportedOperation(StoreError):
    """The backend does not offer that operation (one line for the owner)."""


def missing(what: str, where: str) -> UnsupportedOperation:
    """The one-line refusal of an operation a backend lacks, e.g. "export is not part of the
    HTTP memory contract"."""
    return UnsupportedOperation(f"{what} is not part of {where}")
