"""What a PostgreSQL fact provider is bound to: one tenant's spec, shared or one session's."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from specwire.runtime.core.clock import Clock
from specwire.runtime.core.errors import StoreError
from specwire.runtime.core.ids import CLIENT_KEY_RE, CLIENT_KEY_RULE, SPEC_KEY_RE
from specwire.runtime.facts.model import InvalidRequestError, to_ms
from specwire.runtime.facts.providers.postgres import connection
from specwire.runtime.facts.providers.protocol import RecallRequest
from specwire.runtime.facts.validation import NewFact
from specwire.runtime.safety.injection import InjectionHit

if TYPE_CHECKING:
    from psycopg import Connection
    from psycopg_pool import ConnectionPool

    from specwire.runtime.embedders import Embedder

_T = TypeVar("_T")


class ScopeError(StoreError):
    """A call claimed a tenant, spec or session other than the one its provider is bound to."""


@dataclass(frozen=True)
class FactScope:
    """Whose memory: a tenant's spec, shared (``session`` None) or one session's."""

    tenant: str
    spec: str
    session: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.tenant, str) or not CLIENT_KEY_RE.fullmatch(self.tenant):
            raise InvalidRequestError(f"tenant must be {CLIENT_KEY_RULE}")
        if not isinstance(self.spec, str) or not SPEC_KEY_RE.fullmatch(self.spec):
            raise InvalidRequestError("spec must be a spec name (1-128 letters, digits, _ .:-)")
        if self.session is not None and (
            not isinstance(self.session, str) or not CLIENT_KEY_RE.fullmatch(self.session)
        ):
            raise InvalidRequestError(f"session must be {CLIENT_KEY_RULE}")

    def params(self) -> dict[str, Any]:
        return {"tenant": self.tenant, "spec": self.spec, "session": self.session or ""}


class Binding:
    """One scope of one database and how statements run on it: what every part of
    ``PostgresFactProvider`` (``writing``, ``bulk``, ``recalling``, ``forgetting``,
    ``updating``, ``quarantine``, ``owner``, ``sweeping``) is handed."""

    def __init__(
        self,
        *,
        scope: FactScope,
        pool: ConnectionPool[Any],
        now: Clock,
        timeout_s: float,
        screen: Any,
        embedder: Embedder | None,
        postings_from: int | None,
        scored_at_most: int,
        postings_rare: int,
    ) -> None:
        self.scope = scope
        self.pool = pool
        self.now = now
        self.timeout_s = timeout_s
        self.screen = screen
        self.postings_from = postings_from
        self.scored_at_most = scored_at_most
        self.postings_rare = postings_rare
        self.embedder = embedder
        self.dim = None if embedder is None else int(embedder.dim)
        # Facts screened clean on read (not screened again; cleared past 100,000).
        self.clean: set[str] = set()

    def check_scope(self, claimed: FactScope | None) -> None:
        if claimed is not None and claimed != self.scope:
            raise ScopeError(
                "the request's scope does not match the provider's bound scope; nothing was done"
            )

    def params(self, now: int) -> dict[str, Any]:
        return {**self.scope.params(), "now": now}

    def now_ms(self) -> int:
        return to_ms(self.now())

    def bounded(
        self,
        what: str,
        write: bool,
        call: Callable[[], _T],
        *,
        request: RecallRequest | None = None,
    ) -> _T:
        """``call()`` under the client-side deadline (``connection.bounded``)."""
        return connection.bounded(what, write, call, timeout_s=self.timeout_s, request=request)

    def transaction(self, what: str) -> AbstractContextManager[Connection[Any]]:
        """A transaction under the statement deadline (``connection.transaction``)."""
        return connection.transaction(self.pool, what, timeout_s=self.timeout_s)

    def vector(self, texts: list[str]) -> list[str] | None:
        """``texts`` embedded as pgvector literals; None without an embedder or when it fails
        (a fact is then stored without a vector; a query is ranked by full text alone)."""
        if self.embedder is None:
            return None
        try:
            rows = self.embedder.embed(texts)
        except Exception:  # an embedder failure must never fail a write or a recall
            return None
        return ["[" + ",".join(format(float(x), ".8g") for x in row) + "]" for row in rows]

    def screened(self, new: NewFact) -> InjectionHit | None:
        if self.screen is None:
            return None
        found: InjectionHit | None = self.screen("\n".join([new.text, *new.tags]))
        return found
