"""``PostgresFactProvider``: facts in PostgreSQL (full text + optional pgvector), one scope each.

The same semantics as the local store (``runtime.facts.store``), on a database many processes
and hosts share:

- **Scope in SQL.** Every row carries ``tenant``, ``spec`` and ``session`` (``''``: the spec's
  shared memory) and every statement names all three in its ``WHERE``, taken from the scope the
  provider is bound to. A call that claims another scope (``scope=``) is refused with
  ``ScopeError`` before any statement runs: never a write elsewhere.
- **Never deleted.** Forgetting, superseding and expiring are tombstones (``tombstones``); an
  expired fact is not live from ``expires_at`` on, whether or not a tombstone was written.
  Times are epoch milliseconds from the provider's clock (``now=``), never the server's.
- **Full text**: ``facts.tsv`` is a generated ``tsvector`` (``simple`` configuration) over the
  fact's tokens as ``runtime.facts.text`` cuts them, with a GIN index; queries are built from the
  same tokens (OR for recall, AND for forget by query), so what matches is what matches locally.
- **Vectors** (with an embedder): ``fact_vectors_<dim>`` holds one ``vector(dim)`` per fact with
  an HNSW cosine index; recall fuses the ``ts_rank`` ranking with the cosine ranking by RRF
  (k = 60) in one SQL statement, and adds the evidence boost (1/61) once.
- **Quarantine**: a write the injection scanner flags is held in ``quarantine`` and never
  recalled; recall screens what it is about to return again (a later rule protects old facts).
- **Migrations**: versioned (``schema_version``), applied at start-up in one transaction under
  ``pg_advisory_xact_lock``, so several processes starting at once apply each version once.

psycopg (3) and psycopg_pool are imported when a provider is built, never by ``import runtime``.
Install them with ``pip install 'specwire[postgres]'``.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
import weakref
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, TypeVar

from specwire.runtime.core.clock import Clock, utc_now
from specwire.runtime.core.errors import StoreError
from specwire.runtime.core.ids import CLIENT_KEY_RE, CLIENT_KEY_RULE, SPEC_KEY_RE, new_memory_id
from specwire.runtime.core.scopes import SCOPES
from specwire.runtime.facts import validation
from specwire.runtime.facts.fusion import RRF_K
from specwire.runtime.facts.importing import ImportedFact, ImportResult, import_into
from specwire.runtime.facts.lexical.ranking import PROOF_BOOST, unit_score
from specwire.runtime.facts.model import (
    MAX_KEYED_TEXT_BYTES,
    TIERS,
    CapExceededError,
    Fact,
    FactRecord,
    FactStatus,
    InvalidRequestError,
    QuarantinedFact,
    SweepResult,
    from_ms,
    to_ms,
)
from specwire.runtime.facts.providers.admin import EVERY_KEY, FactFilter, FactListing
from specwire.runtime.facts.providers.errors import ProviderTimeout, ProviderUncertain
from specwire.runtime.facts.providers.postgres import admin as admin_sql
from specwire.runtime.facts.providers.postgres import bm25, keyed, term_stats, updating
from specwire.runtime.facts.providers.postgres import restore as restore_sql
from specwire.runtime.facts.providers.postgres.sql import COLUMNS as _COLUMNS
from specwire.runtime.facts.providers.postgres.sql import (
    IN_KEY,
    key_of,
    key_params,
    subject_of,
    visible_clause,
)
from specwire.runtime.facts.providers.postgres.sql import LEXICAL_RANK as _LEXICAL_RANK
from specwire.runtime.facts.providers.postgres.sql import LIVE as _LIVE
from specwire.runtime.facts.providers.postgres.sql import PROVEN as _PROVEN
from specwire.runtime.facts.providers.postgres.sql import SCOPE as _SCOPE
from specwire.runtime.facts.providers.postgres.sql import SCOPE_COLUMNS as _SCOPE_COLUMNS
from specwire.runtime.facts.providers.protocol import (
    HEALTH_DEADLINE_S,
    LOCAL_CAPABILITIES,
    Capabilities,
    ForgetRequest,
    ForgetResult,
    Health,
    ProviderDescriptor,
    ProviderHit,
    ReadRequest,
    ReadResponse,
    RecallRequest,
    RecallResponse,
    RetainRequest,
    RetainResult,
    UpdateRequest,
)
from specwire.runtime.facts.providers.recall_bounds import (
    give_up_if_expired,
    remaining_s,
    search_text,
    within_request,
)
from specwire.runtime.facts.store import merged_item
from specwire.runtime.facts.text import MAX_QUERY_TERMS, document_terms, query_terms
from specwire.runtime.facts.validation import NewFact
from specwire.runtime.safety.injection import InjectionHit, scan

if TYPE_CHECKING:
    from psycopg import Connection
    from psycopg_pool import ConnectionPool

    from specwire.runtime.embedders import Embedder


def _sql_list(values: Sequence[str]) -> str:
    """Constant identifiers (``SCOPES``, ``TIERS``) as a quoted SQL list."""
    return ", ".join("'" + value.replace("'", "''") + "'" for value in values)


# Any fixed 64-bit number: the advisory lock migrations run under.
MIGRATION_LOCK = 0x5EC_F1AC7_5C4E3A
# Candidates taken from each ranking before fusion (as ``runtime.facts.hybrid``).
MIN_DEPTH = 20
DEFAULT_TIMEOUT_S = 5.0
# HNSW candidate list per query: pgvector's default, raised to the fusion depth (its maximum
# is 1000).
HNSW_EF_SEARCH = 40
HNSW_EF_SEARCH_MAX = 1000

MIGRATIONS: tuple[tuple[int, tuple[str, ...]], ...] = (
    (
        1,
        (
            """CREATE TABLE facts (
                seq bigserial PRIMARY KEY,
                id text NOT NULL UNIQUE,
                tenant text NOT NULL,
                spec text NOT NULL,
                session text NOT NULL,
                text text NOT NULL,
                norm_text text NOT NULL,
                terms text NOT NULL,
                tags text[] NOT NULL,
                created_at bigint NOT NULL,
                expires_at bigint,
                superseded_by text,
                session_id text,
                evidence text[] NOT NULL,
                tsv tsvector GENERATED ALWAYS AS (to_tsvector('simple'::regconfig, terms)) STORED
            )""",
            "CREATE INDEX facts_tsv ON facts USING gin (tsv)",
            "CREATE INDEX facts_scope_text ON facts (tenant, spec, session, norm_text)",
            """CREATE TABLE tombstones (
                target text PRIMARY KEY REFERENCES facts (id),
                tenant text NOT NULL,
                spec text NOT NULL,
                session text NOT NULL,
                kind text NOT NULL CHECK (kind IN ('superseded', 'expired', 'forgotten')),
                at bigint NOT NULL,
                reason text,
                superseded_by text
            )""",
            """CREATE TABLE quarantine (
                id text PRIMARY KEY,
                tenant text NOT NULL,
                spec text NOT NULL,
                session text NOT NULL,
                text text NOT NULL,
                tags text[] NOT NULL,
                created_at bigint NOT NULL,
                ttl_ms bigint,
                session_id text,
                evidence text[] NOT NULL,
                rule text NOT NULL,
                found_on text NOT NULL CHECK (found_on IN ('write', 'read'))
            )""",
            "CREATE INDEX quarantine_scope ON quarantine (tenant, spec, session)",
        ),
    ),
    (
        # Memory scopes (``runtime.core.scopes``): each fact's scope key, its key and tier as
        # columns. Facts written before scopes are ``agent`` facts (the column default: no
        # table rewrite). The subject of ``agent`` and ``crew`` is ''.
        2,
        (
            """ALTER TABLE facts ADD COLUMN scope text NOT NULL DEFAULT 'agent',
                ADD COLUMN subject text NOT NULL DEFAULT '',
                ADD COLUMN fact_key text,
                ADD COLUMN tier text""",
            f"""ALTER TABLE facts ADD CONSTRAINT facts_scope_key CHECK (
                scope IN ({_sql_list(SCOPES)})
                AND (scope IN ('agent', 'crew')) = (subject = ''))""",
            f"""ALTER TABLE facts ADD CONSTRAINT facts_tier CHECK (
                tier IS NULL OR (fact_key IS NOT NULL AND tier IN ({_sql_list(TIERS)})))""",
            "CREATE INDEX facts_scope_key ON facts (tenant, spec, session, scope, subject)",
            "CREATE INDEX facts_keyed ON facts (tenant, spec, session, scope, subject, fact_key) "
            "WHERE fact_key IS NOT NULL",
            # ``seq``: writes held in one millisecond list in the order they came.
            """ALTER TABLE quarantine ADD COLUMN scope text NOT NULL DEFAULT 'agent',
                ADD COLUMN subject text NOT NULL DEFAULT '',
                ADD COLUMN fact_key text,
                ADD COLUMN tier text,
                ADD COLUMN seq bigserial""",
        ),
    ),
    # BM25 statistics kept by triggers, backfilled from the facts already there
    # (``term_stats``); when each binding was last swept (``postgres.sweeping``).
    (
        3,
        (
            *term_stats.MIGRATION,
            """CREATE TABLE sweeps (
                tenant text NOT NULL,
                spec text NOT NULL,
                session text NOT NULL,
                swept_at bigint NOT NULL,
                PRIMARY KEY (tenant, spec, session)
            )""",
        ),
    ),
)
SCHEMA_VERSION = MIGRATIONS[-1][0]


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


def migrate(pool: ConnectionPool[Any], *, vector_dim: int | None = None) -> int:
    """Bring the database to ``SCHEMA_VERSION`` (and the vector table of ``vector_dim``).

    One transaction under an advisory lock: processes starting together wait for each other and
    each version is applied once. Returns the version the database is at.
    """
    with pool.connection() as conn, conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATION_LOCK,))
        conn.execute(
            "CREATE TABLE IF NOT EXISTS schema_version ("
            "version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())"
        )
        row = conn.execute("SELECT coalesce(max(version), 0) FROM schema_version").fetchone()
        current = int(row[0]) if row else 0
        if current > SCHEMA_VERSION:
            raise StoreError(
                f"the fact database is at schema version {current}, newer than this runtime's "
                f"{SCHEMA_VERSION}: upgrade specwire"
            )
        for version, statements in MIGRATIONS:
            if version <= current:
                continue
            for statement in statements:
                conn.execute(statement)
            conn.execute("INSERT INTO schema_version (version) VALUES (%s)", (version,))
            current = version
        if vector_dim is not None:
            table = _vector_table(vector_dim)
            conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
            conn.execute(
                f"""CREATE TABLE IF NOT EXISTS {table} (
                    fact_id text PRIMARY KEY REFERENCES facts (id),
                    tenant text NOT NULL,
                    spec text NOT NULL,
                    session text NOT NULL,
                    embedder text NOT NULL,
                    embedding vector({vector_dim}) NOT NULL
                )"""
            )
            conn.execute(
                f"CREATE INDEX IF NOT EXISTS {table}_hnsw ON {table} "
                "USING hnsw (embedding vector_cosine_ops)"
            )
        return current


_migrated: weakref.WeakKeyDictionary[Any, dict[int | None, int]] = weakref.WeakKeyDictionary()
_migrated_lock = threading.Lock()


def _migrate_once(pool: ConnectionPool[Any], dim: int | None) -> int:
    """``migrate`` once per pool and vector dimension: providers built per tenant or per turn
    on a shared pool do not each take the migration lock."""
    with _migrated_lock:
        done = _migrated.setdefault(pool, {})
        if dim not in done:
            done[dim] = migrate(pool, vector_dim=dim)
        return done[dim]


# The client-side deadline is the statement deadline plus this (connection wait, round trips).
WATCHDOG_MARGIN_S = 1.0
_T = TypeVar("_T")
_watchdog_pool: ThreadPoolExecutor | None = None
_watchdog_lock = threading.Lock()


def _watchdog() -> ThreadPoolExecutor:
    global _watchdog_pool
    with _watchdog_lock:
        if _watchdog_pool is None:
            _watchdog_pool = ThreadPoolExecutor(max_workers=32, thread_name_prefix="specwire-pg")
        return _watchdog_pool


def _cap(at_most: int | None) -> int | None:
    """Rows a forget by query locks: one past ``at_most`` proves there are too many."""
    return None if at_most is None else at_most + 1


def _quiet(logger: logging.Logger) -> None:
    """Drop a logger's records (a handler of its own keeps ``logging.lastResort`` away)."""
    logger.propagate = False
    if not any(isinstance(h, logging.NullHandler) for h in logger.handlers):
        logger.addHandler(logging.NullHandler())


def _vector_table(dim: int) -> str:
    if isinstance(dim, bool) or not isinstance(dim, int) or not 1 <= dim <= 16000:
        raise StoreError(f"embedding dimension out of range: {dim!r}")
    return f"fact_vectors_{dim}"


def open_pool(
    dsn: str, *, max_size: int = 10, timeout_s: float = DEFAULT_TIMEOUT_S
) -> ConnectionPool[Any]:
    """A connection pool for ``dsn`` (opened now; ``StoreError`` when the server is down)."""
    import psycopg
    from psycopg_pool import ConnectionPool, PoolTimeout

    try:
        psycopg.conninfo.conninfo_to_dict(dsn)
    except psycopg.ProgrammingError:
        # libpq's message quotes the part it could not parse, which may be the password.
        raise StoreError("the fact database's connection string is not valid") from None
    # The pool reports failed connection attempts through ``logging`` with libpq's text.
    _quiet(logging.getLogger("psycopg.pool"))
    pool: ConnectionPool[Any] = ConnectionPool(
        dsn,
        min_size=1,
        max_size=max_size,
        timeout=timeout_s,
        kwargs={
            "connect_timeout": max(1, int(timeout_s)),
            # A peer that vanished is noticed by the kernel, not only by the watchdog.
            "keepalives": 1,
            "keepalives_idle": 10,
            "keepalives_interval": 5,
            "keepalives_count": 3,
            "tcp_user_timeout": int(timeout_s * 1000) + 1000,
        },
        open=False,
    )
    try:
        pool.open(wait=True, timeout=timeout_s)
    except (PoolTimeout, psycopg.Error) as exc:
        pool.close()
        raise StoreError(f"cannot reach the fact database: {_brief(exc)}") from exc
    return pool


class PostgresFactProvider:
    """A ``FactProvider`` bound to one scope of a PostgreSQL database.

    Give ``dsn`` (the provider opens and owns a pool; ``close()`` closes it) or a shared ``pool``
    (its owner closes it). ``embedder``: hybrid recall (pgvector) with that embedder's
    dimension. ``now``: the clock TTLs run on. ``timeout_s``: the deadline of each statement
    and of waiting for a connection. ``screen``: the injection scanner (None: none).
    """

    def __init__(
        self,
        dsn: str | None = None,
        *,
        scope: FactScope,
        pool: ConnectionPool[Any] | None = None,
        embedder: Embedder | None = None,
        now: Clock = utc_now,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        screen: Any = scan,
        name: str = "primary",
    ) -> None:
        if (dsn is None) == (pool is None):
            raise InvalidRequestError("PostgresFactProvider: give exactly one of dsn or pool")
        self.scope = scope
        self._name = name
        self._now = now
        self._timeout_ms = max(1, int(timeout_s * 1000))
        self._timeout_s = timeout_s
        self._screen = screen
        self._embedder = embedder
        self._dim = None if embedder is None else int(embedder.dim)
        self._clean: set[str] = set()
        self._owns_pool = pool is None
        if pool is None:
            assert dsn is not None
            pool = open_pool(dsn, timeout_s=timeout_s)
        self._pool = pool
        try:
            with _translated("migrate the fact database"):
                self.schema_version = _migrate_once(pool, self._dim)
        except BaseException:
            self.close()
            raise

    @property
    def pool(self) -> ConnectionPool[Any]:
        return self._pool

    def close(self) -> None:
        if self._owns_pool:
            self._pool.close()

    # -- the protocol ----------------------------------------------------------------------

    def retain(self, request: RetainRequest, *, scope: FactScope | None = None) -> RetainResult:
        return self._bounded("retain", True, lambda: self._retain(request, scope=scope))

    def _retain(self, request: RetainRequest, *, scope: FactScope | None = None) -> RetainResult:
        self._check_scope(scope)
        if request.supersedes is not None:
            validation.memory_id(request.supersedes)
        new = NewFact(
            request.text,
            request.tags,
            request.ttl_ms,
            request.provenance,
            scope=request.scope,
            key=request.key,
            tier=request.tier,
        )
        hit = self._screened(new)
        if hit is not None:
            return self._hold(new, hit)
        if request.key is not None:
            return self._retain_keyed(request, new)
        vector = self._vector([_embedded(new)])
        with self._transaction("retain") as conn:
            now = self._now_ms()
            params = self._params(now)
            expires = _expiry(new, now)
            if request.supersedes is not None:
                self._lock_live(conn, request.supersedes, params, new)
                fact_id = self._insert(conn, new, now, vector)
                conn.execute(
                    f"UPDATE facts f SET superseded_by = %(by)s WHERE f.id = %(old)s AND {_SCOPE}",
                    {**params, "by": fact_id, "old": request.supersedes},
                )
                conn.execute(
                    "INSERT INTO tombstones (target, tenant, spec, session, kind, at, "
                    "superseded_by) VALUES (%(old)s, %(tenant)s, %(spec)s, %(session)s, "
                    "'superseded', %(now)s, %(by)s)",
                    {**params, "by": fact_id, "old": request.supersedes},
                )
                return RetainResult(fact_id, True, expires, request.supersedes, bytes=_size(new))
            if request.if_absent:
                # Equal text counts only among live plain facts of the same scope key.
                keyed.lock(conn, params, new.scope, "text", new.norm_text)
                row = conn.execute(
                    f"SELECT f.id, f.expires_at, f.text, f.tags FROM facts f WHERE {_LIVE} "
                    f"AND f.norm_text = %(norm)s AND {IN_KEY} AND f.fact_key IS NULL "
                    "ORDER BY f.seq LIMIT 1",
                    {**params, **key_params(new.scope), "norm": new.norm_text},
                ).fetchone()
                if row is not None:
                    return RetainResult(
                        row[0], False, _when(row[1]), text=row[2], tags=tuple(row[3])
                    )
            fact_id = self._insert(conn, new, now, vector)
            return RetainResult(fact_id, True, expires, bytes=_size(new))

    def _retain_keyed(self, request: RetainRequest, new: NewFact) -> RetainResult:
        """Replace (or append to) the live fact with ``request.key`` in ``request.scope``, in
        one transaction under that key's lock, so concurrent appends all land."""
        assert request.key is not None
        vector = None if request.mode == "append" else self._vector([_embedded(new)])
        with self._transaction("retain") as conn:
            now = self._now_ms()
            params = self._params(now)
            keyed.lock(conn, params, new.scope, "key", request.key)
            old = keyed.live_keyed(conn, params, new.scope, request.key)
            current = 0 if old is None else len(old.text.encode("utf-8"))
            text = new.text
            if request.mode == "append" and old is not None:
                text = keyed.appended(old.text, new.text)
            size = len(text.encode("utf-8"))
            cap = min(request.max_bytes or MAX_KEYED_TEXT_BYTES, MAX_KEYED_TEXT_BYTES)
            if size > cap:
                raise CapExceededError(request.key, cap, current, size)
            stored = new
            if text != new.text:
                stored = NewFact(
                    text,
                    new.tags,
                    new.ttl_ms,
                    new.provenance,
                    scope=new.scope,
                    key=new.key,
                    tier=new.tier,
                )
                vector = self._vector([_embedded(stored)])
            fact_id = self._insert(conn, stored, now, vector)
            if old is not None:
                admin_sql.link_superseded(conn, params, old.id, fact_id, now, None)
            return RetainResult(
                fact_id,
                True,
                _expiry(stored, now),
                None if old is None else old.id,
                bytes=_size(stored),
            )

    def retain_many(
        self, requests: Sequence[RetainRequest], *, scope: FactScope | None = None
    ) -> list[RetainResult]:
        """Append several facts in one transaction: all of them, or none (the bulk path).

        Every request is validated and screened as ``retain`` does it before anything is
        written; a bad one is refused with its position and nothing is written. A request the
        scanner flags is held in ``quarantine`` in the same transaction and answered with
        ``quarantined`` set. Plain appends only: ``supersedes`` and ``if_absent`` are refused
        here (use ``retain``). The facts, and with an embedder their vectors (embedded in one
        batch before the transaction), go in by ``COPY``. One result per request, in order.
        """
        self._check_scope(scope)
        news: list[NewFact] = []
        for index, request in enumerate(requests):
            if not isinstance(request, RetainRequest):
                kind = type(request).__name__
                raise InvalidRequestError(
                    f"item {index} is not a RetainRequest ({kind}); nothing was written"
                )
            if request.supersedes is not None or request.if_absent or request.key is not None:
                raise InvalidRequestError(
                    f"item {index}: retain_many only appends (no supersedes, if_absent or "
                    "key); nothing was written"
                )
            try:
                news.append(
                    NewFact(
                        request.text,
                        request.tags,
                        request.ttl_ms,
                        request.provenance,
                        scope=request.scope,
                    )
                )
            except InvalidRequestError as exc:
                raise InvalidRequestError(f"item {index}: {exc}; nothing was written") from exc
        if not news:
            return []
        hits = [self._screened(new) for new in news]
        clean = [new for new, hit in zip(news, hits, strict=True) if hit is None]
        vectors = self._vector([_embedded(new) for new in clean]) if clean else None
        for attempt in range(3):
            try:
                return self._copy_many(news, hits, vectors)
            except StoreError as exc:
                import psycopg

                # Two drawn ids collided (2^-64 odds per pair): draw them all again.
                if attempt == 2 or not isinstance(exc.__cause__, psycopg.errors.UniqueViolation):
                    raise
        raise AssertionError("unreachable")

    def recall(self, request: RecallRequest, *, scope: FactScope | None = None) -> RecallResponse:
        give_up_if_expired(request)
        if request.types:
            return RecallResponse(())  # facts carry no type: none is of the asked ones
        response = self._bounded(
            "recall", False, lambda: self._recall(request, scope=scope), request=request
        )
        give_up_if_expired(request)
        return RecallResponse(within_request(request, response.hits))

    def _recall(self, request: RecallRequest, *, scope: FactScope | None = None) -> RecallResponse:
        self._check_scope(scope)
        flagged: set[str] = set()
        hits: list[ProviderHit] = []
        for _ in range(3):
            hits = self._ranking(request)
            found = self._flagged_on_read(hits)
            if not found:
                return RecallResponse(tuple(hits))
            self._hold_on_read(found)
            flagged.update(found)
        return RecallResponse(tuple(hit for hit in hits if hit.id not in flagged))

    def forget(self, request: ForgetRequest, *, scope: FactScope | None = None) -> ForgetResult:
        return self._bounded("forget", True, lambda: self._forget(request, scope=scope))

    def _forget(self, request: ForgetRequest, *, scope: FactScope | None = None) -> ForgetResult:
        self._check_scope(scope)
        reason = validation.reason(request.reason)
        # A fact outside ``visible`` is left alone, as if it did not exist; with ``visible`` (a
        # model's forget) only plain facts, never a tier note. None: the owner's, every fact.
        visible, visible_params = visible_clause(
            request.visible, None if request.visible is None else ()
        )
        if request.id is not None:
            with self._transaction("forget") as conn:
                params = {**self._params(self._now_ms()), **visible_params}
                row = conn.execute(
                    f"SELECT f.id, f.text FROM facts f WHERE f.id = %(id)s AND {_LIVE} "
                    f"AND {visible} FOR UPDATE OF f",
                    {**params, "id": request.id},
                ).fetchone()
                if row is None:
                    return ForgetResult(0)
                return self._forgotten(conn, [(row[0], row[1])], reason, params)
        assert request.query is not None
        terms = query_terms(request.query, limit=None)
        if len(terms) > MAX_QUERY_TERMS:
            raise InvalidRequestError(
                f"the forget query has too many distinct words ({len(terms)}; at most "
                f"{MAX_QUERY_TERMS})"
            )
        if not terms:
            return ForgetResult(0)
        with self._transaction("forget") as conn:
            params = {**self._params(self._now_ms()), **visible_params}
            rows = conn.execute(
                f"""SELECT f.id, f.text FROM facts f, (SELECT to_tsquery('simple', %(q)s) AS q) q
                WHERE f.tsv @@ q.q AND {_LIVE} AND {visible}
                ORDER BY {_LEXICAL_RANK} DESC, f.seq LIMIT %(cap)s FOR UPDATE OF f""",
                {**params, "q": _tsquery(terms, every=True), "cap": _cap(request.at_most)},
            ).fetchall()
            if request.at_most is not None and len(rows) > request.at_most:
                raise InvalidRequestError(
                    f"that query matches {len(rows)} memories, more than {request.at_most} at "
                    "once: use more words or forget by id. Nothing was forgotten."
                )
            return self._forgotten(conn, [(row[0], row[1]) for row in rows], reason, params)

    def update(self, request: UpdateRequest, *, scope: FactScope | None = None) -> RetainResult:
        """``UpdatingProvider``: see ``runtime.facts.providers.postgres.updating``."""
        return self._bounded("update", True, lambda: self._update(request, scope=scope))

    def _update(self, request: UpdateRequest, *, scope: FactScope | None = None) -> RetainResult:
        self._check_scope(scope)
        with self._transaction("update") as conn:
            key, text, tags = updating.locked_live(
                conn, self._params(self._now_ms()), request.id, request.visible
            )
        new = NewFact(request.text, request.tags, scope=key)
        if (new.text, new.tags) == (text, tags):
            return RetainResult(request.id, False, None, text=text, tags=tags)
        hit = self._screened(new)
        if hit is not None:
            return self._hold(new, hit)
        vector = self._vector([_embedded(new)])
        with self._transaction("update") as conn:
            params = self._params(self._now_ms())
            if updating.locked_live(conn, params, request.id, request.visible) != (key, text, tags):
                raise StoreError(f"{request.id} changed while it was being updated: try again")
            table = None if self._dim is None else _vector_table(self._dim)
            old_id = updating.edit_live(conn, params, request.id, new, table)
            if vector is not None and self._embedder is not None and table is not None:
                conn.execute(
                    f"INSERT INTO {table} (fact_id, tenant, spec, session, embedder, embedding) "
                    "VALUES (%(id)s, %(tenant)s, %(spec)s, %(session)s, %(embedder)s, "
                    "%(vec)s::vector)",
                    {**params, "id": request.id, "embedder": self._embedder.id, "vec": vector[0]},
                )
            expires = conn.execute(
                "SELECT expires_at FROM facts WHERE id = %(id)s", {"id": request.id}
            ).fetchone()
        self._clean.discard(request.id)
        return RetainResult(
            request.id, True, _when(expires[0] if expires else None), old_id, bytes=_size(new)
        )

    def read(self, request: ReadRequest, *, scope: FactScope | None = None) -> ReadResponse:
        return self._bounded("read", False, lambda: self._read(request, scope=scope))

    def _read(self, request: ReadRequest, *, scope: FactScope | None = None) -> ReadResponse:
        """Live, visible facts only (a fact elsewhere is absent, never an error), screened again
        as recall screens them, sorted by scope key."""
        self._check_scope(scope)
        with self._transaction("read") as conn:
            rows = keyed.records(conn, self._params(self._now_ms()), request)
        found = [keyed.record(row) for row in rows]
        flagged = self._flagged_on_read(found)
        if flagged:
            self._hold_on_read(flagged)
        kept = [record for record in found if record.id not in flagged]
        return ReadResponse(tuple(sorted(kept, key=lambda record: (record.scope, record.id))))

    def health(self) -> Health:
        problem: str | None = None
        try:
            import psycopg
            from psycopg_pool import PoolTimeout

            deadline_ms = int(HEALTH_DEADLINE_S * 1000)
            with self._pool.connection(timeout=HEALTH_DEADLINE_S) as conn, conn.transaction():
                conn.execute(
                    "SELECT set_config('statement_timeout', %s, true), "
                    "set_config('lock_timeout', %s, true)",
                    (str(deadline_ms), str(deadline_ms)),
                )
                conn.execute(
                    f"SELECT 1 FROM facts f WHERE {_SCOPE} LIMIT 1", self.scope.params()
                ).fetchall()
        except (PoolTimeout, psycopg.Error, StoreError) as exc:
            problem = f"the fact database is not answering: {_brief(exc)}"
        return Health(ok=problem is None, message=problem, checked_at=self._now())

    def descriptor(self) -> ProviderDescriptor:
        return ProviderDescriptor(self._name, "postgres", description="PostgreSQL facts")

    def capabilities(self) -> Capabilities:
        # The local store's, plus ranking by meaning when an embedder is bound.
        return dataclasses.replace(
            LOCAL_CAPABILITIES,
            semantic=self._embedder is not None,
            scopes=True,
            keys=True,
            point_read=True,
            updates=True,
        )

    # -- owner operations ------------------------------------------------------------------

    def quarantined_ids(self) -> list[str]:
        """The ids of this scope's held writes, oldest first."""
        with self._transaction("list quarantined memories") as conn:
            rows = conn.execute(
                "SELECT q.id FROM quarantine q WHERE q.tenant = %(tenant)s AND q.spec = %(spec)s "
                "AND q.session = %(session)s ORDER BY q.created_at, q.seq",
                self.scope.params(),
            ).fetchall()
            return [row[0] for row in rows]

    def list_facts(self, listing: FactListing, where: FactFilter = EVERY_KEY) -> list[FactStatus]:
        with self._transaction("list memories") as conn:
            return admin_sql.listed(conn, self._params(self._now_ms()), listing, where)

    def get_fact(self, fact_id: str) -> FactStatus | None:
        validation.memory_id(fact_id)
        with self._transaction("read a memory") as conn:
            return admin_sql.status_of(conn, self._params(self._now_ms()), fact_id)

    def export_facts(self, where: FactFilter = EVERY_KEY) -> list[FactStatus]:
        return self.list_facts(FactListing(status="all"), where)

    def tombstone(self, fact_id: str, *, reason: str | None = None) -> Fact | None:
        validation.memory_id(fact_id)
        reason = validation.reason(reason)
        with self._transaction("forget") as conn:
            params = self._params(self._now_ms())
            fact = admin_sql.live_fact(conn, params, fact_id)
            if fact is None:
                return None
            self._tombstone(conn, [fact_id], "forgotten", reason, params)
            return fact

    def consolidate(
        self, survivor_id: str, duplicate_ids: Sequence[str], *, reason: str | None = None
    ) -> Fact:
        """Fold live duplicates into the survivor, in one transaction (the local store's
        rules: ``FactStore.consolidate``)."""
        validation.memory_id(survivor_id)
        for dup in duplicate_ids:
            validation.memory_id(dup)
        reason = validation.reason(reason)
        with self._transaction("consolidate memories") as conn:
            now = self._now_ms()
            params = self._params(now)
            survivor = admin_sql.live_fact(conn, params, survivor_id)
            if survivor is None:
                raise StoreError(f"cannot consolidate into {survivor_id}: it is not live")
            if survivor.key is not None:
                raise InvalidRequestError(f"cannot consolidate into {survivor_id}: it is keyed")
            # Only plain facts of the survivor's own scope key fold into it (a fact never moves).
            group = [
                fact
                for dup in dict.fromkeys(duplicate_ids)
                if dup != survivor_id
                and (fact := admin_sql.live_fact(conn, params, dup))
                and fact.key is None
                and fact.scope == survivor.scope
            ]
            merged = merged_item(survivor, group, now)
            new = None if merged is None else NewFact(*merged, scope=survivor.scope)
            if new is not None and self._screened(new) is not None:
                new = None  # never let a merge write what the scanner flags
            target = survivor
            if new is not None:
                vector = self._vector([_embedded(new)])
                target_id = self._insert(conn, new, now, vector)
                admin_sql.link_superseded(conn, params, survivor_id, target_id, now, reason)
                target = Fact(
                    target_id,
                    new.text,
                    new.tags,
                    from_ms(now),
                    _expiry(new, now),
                    None,
                    new.provenance,
                    scope=new.scope,
                )
            for fact in group:
                admin_sql.link_superseded(conn, params, fact.id, target.id, now, reason)
            return target

    def import_facts(self, facts: Sequence[ImportedFact]) -> ImportResult:
        """Import an export's facts in one transaction (``runtime.facts.importing``'s rules);
        imported facts carry no vector (full-text recall finds them)."""
        with self._transaction("import memories") as conn:
            now = self._now_ms()
            params = self._params(now)
            sink = admin_sql.PostgresImportSink(
                conn,
                params,
                screened=lambda new: None if (hit := self._screened(new)) is None else hit.label,
                insert=lambda c, new, created: self._insert(c, new, created, None),
                hold=lambda c, new, rule: _insert_held(c, new_memory_id(), new, rule, params),
            )
            return import_into(sink, facts, now)

    def restore_facts(self, statuses: Sequence[FactStatus]) -> int:
        """Write the facts this scope lacks exactly as given (``runtime.facts.restoring``), in
        one transaction."""
        with self._transaction("restore memories") as conn:
            return restore_sql.restore_facts(conn, self.scope.params(), statuses)

    def restore_quarantined(self, held: Sequence[QuarantinedFact]) -> int:
        """Hold the writes this scope lacks exactly as given, in one transaction."""
        with self._transaction("restore quarantined memories") as conn:
            return restore_sql.restore_held(conn, self.scope.params(), held)

    def sweep_expired(self) -> SweepResult:
        swept = self.sweep()
        with self._transaction("count memories") as conn:
            live = admin_sql.count_live(conn, self._params(self._now_ms()))
        return SweepResult(swept=swept, live=live)

    def quarantined(self, where: FactFilter = EVERY_KEY) -> list[QuarantinedFact]:
        with self._transaction("list quarantined memories") as conn:
            return admin_sql.held(conn, self.scope.params(), where)

    def quarantined_by_id(self, fact_id: str) -> QuarantinedFact | None:
        validation.memory_id(fact_id)
        with self._transaction("read a quarantined memory") as conn:
            return admin_sql.held_by_id(conn, self.scope.params(), fact_id)

    def claim_sweep(self, interval_ms: int) -> bool:
        """Claim this binding's scheduled sweep: True when the last one (by any process) is at
        least ``interval_ms`` old, and it is now stamped as done (``postgres.sweeping``)."""
        with self._transaction("schedule a sweep") as conn:
            row = conn.execute(
                """INSERT INTO sweeps AS s (tenant, spec, session, swept_at)
                VALUES (%(tenant)s, %(spec)s, %(session)s, %(now)s)
                ON CONFLICT (tenant, spec, session) DO UPDATE SET swept_at = EXCLUDED.swept_at
                WHERE s.swept_at <= EXCLUDED.swept_at - %(interval)s
                RETURNING 1""",
                {**self._params(self._now_ms()), "interval": interval_ms},
            ).fetchone()
            return row is not None

    def sweep(self) -> int:
        """Tombstone this scope's expired facts that have none yet; returns how many."""
        with self._transaction("sweep") as conn:
            params = self._params(self._now_ms())
            rows = conn.execute(
                f"""SELECT f.id FROM facts f WHERE {_SCOPE} AND f.superseded_by IS NULL
                AND f.expires_at IS NOT NULL AND f.expires_at <= %(now)s ORDER BY f.seq""",
                params,
            ).fetchall()
            return len(self._tombstone(conn, [row[0] for row in rows], "expired", None, params))

    # -- internals -------------------------------------------------------------------------

    def _check_scope(self, claimed: FactScope | None) -> None:
        if claimed is not None and claimed != self.scope:
            raise ScopeError(
                "the request's scope does not match the provider's bound scope; nothing was done"
            )

    def _params(self, now: int) -> dict[str, Any]:
        return {**self.scope.params(), "now": now}

    def _now_ms(self) -> int:
        return to_ms(self._now())

    def _bounded(
        self,
        what: str,
        write: bool,
        call: Callable[[], _T],
        *,
        request: RecallRequest | None = None,
    ) -> _T:
        """``call()`` under a client-side deadline: the server's ``statement_timeout`` cannot
        fire when the network hangs, so a turn would wait forever. The thread left behind
        finishes when the connection does (keepalives end a dead one). A ``request`` with a
        deadline of its own is waited for no longer than that."""
        future = _watchdog().submit(call)
        wait_s = self._timeout_s + WATCHDOG_MARGIN_S
        left = None if request is None else remaining_s(request)
        try:
            return future.result(timeout=wait_s if left is None else max(0.0, min(wait_s, left)))
        except FutureTimeout:
            if request is not None and left is not None and left < wait_s:
                give_up_if_expired(request, what)
            if write:
                raise ProviderUncertain(
                    f"{what}: the fact database did not answer within {self._timeout_s:g} s; "
                    "the write may or may not have been applied",
                    operation=what,
                    operation_id=None,
                ) from None
            raise ProviderTimeout(
                f"{what}: the fact database did not answer within {self._timeout_s:g} s",
                code="deadline_exceeded",
                retryable=True,
            ) from None

    @contextmanager
    def _transaction(self, what: str) -> Iterator[Connection[Any]]:
        pool = self._pool
        with (
            _translated(what),
            pool.connection(timeout=self._timeout_s) as conn,
            conn.transaction(),
        ):
            conn.execute(
                "SELECT set_config('statement_timeout', %s, true)", (str(self._timeout_ms),)
            )
            yield conn

    def _lock_live(
        self, conn: Connection[Any], old_id: str, params: dict[str, Any], new: NewFact
    ) -> None:
        """Lock the live fact ``new`` replaces; refused when it is not live or belongs to
        another scope key (a later write never moves or widens a fact)."""
        row = conn.execute(
            f"SELECT f.scope, f.subject FROM facts f WHERE f.id = %(id)s AND {_LIVE} "
            "FOR UPDATE OF f",
            {**params, "id": old_id},
        ).fetchone()
        if row is not None:
            if key_of(row[0], row[1]) != new.scope:
                raise InvalidRequestError(f"cannot supersede {old_id}: it belongs to another scope")
            return
        status = conn.execute(
            f"""SELECT CASE
                WHEN f.superseded_by IS NOT NULL OR t.kind = 'superseded' THEN 'superseded'
                WHEN t.kind = 'forgotten' THEN 'forgotten'
                ELSE 'expired' END
            FROM facts f LEFT JOIN tombstones t ON t.target = f.id
            WHERE f.id = %(id)s AND {_SCOPE}""",
            {**params, "id": old_id},
        ).fetchone()
        if status is None:
            raise StoreError(f"no memory with id {old_id}")
        raise StoreError(f"cannot supersede {old_id}: it is {status[0]}, not live")

    def _insert(
        self, conn: Connection[Any], new: NewFact, now: int, vector: list[str] | None
    ) -> str:
        for _ in range(3):
            fact_id = new_memory_id()
            row = conn.execute(
                """INSERT INTO facts (id, tenant, spec, session, text, norm_text, terms, tags,
                created_at, expires_at, session_id, evidence, scope, subject, fact_key, tier)
                VALUES (%(id)s, %(tenant)s, %(spec)s, %(session)s, %(text)s, %(norm)s, %(terms)s,
                %(tags)s, %(now)s, %(expires)s, %(session_id)s, %(evidence)s, %(fact_scope)s,
                %(fact_subject)s, %(fact_key)s, %(tier)s)
                ON CONFLICT (id) DO NOTHING RETURNING id""",
                {
                    **self._params(now),
                    **key_params(new.scope),
                    "fact_key": new.key,
                    "tier": new.tier,
                    "id": fact_id,
                    "text": new.text,
                    "norm": new.norm_text,
                    "terms": document_terms(new.text, new.tags),
                    "tags": list(new.tags),
                    "expires": None if new.ttl_ms is None else now + new.ttl_ms,
                    "session_id": new.provenance.session_id,
                    "evidence": list(new.provenance.evidence),
                },
            ).fetchone()
            if row is not None:
                if vector is not None and self._embedder is not None:
                    assert self._dim is not None
                    conn.execute(
                        f"""INSERT INTO {_vector_table(self._dim)}
                        (fact_id, tenant, spec, session, embedder, embedding)
                        VALUES (%(id)s, %(tenant)s, %(spec)s, %(session)s, %(embedder)s,
                        %(vec)s::vector)""",
                        {
                            **self.scope.params(),
                            "id": fact_id,
                            "embedder": self._embedder.id,
                            "vec": vector[0],
                        },
                    )
                return fact_id
        raise StoreError("could not draw a free memory id")

    def _forgotten(
        self,
        conn: Connection[Any],
        facts: Sequence[tuple[str, str]],
        reason: str | None,
        params: dict[str, Any],
    ) -> ForgetResult:
        done = set(
            self._tombstone(conn, [fact_id for fact_id, _ in facts], "forgotten", reason, params)
        )
        kept = [(fact_id, text) for fact_id, text in facts if fact_id in done]
        return ForgetResult(
            len(kept), tuple(fact_id for fact_id, _ in kept), tuple(text for _, text in kept)
        )

    def _copy_many(
        self,
        news: Sequence[NewFact],
        hits: Sequence[InjectionHit | None],
        vectors: list[str] | None,
    ) -> list[RetainResult]:
        """One transaction: the clean facts (and their vectors) by ``COPY``, the flagged ones
        into ``quarantine``; fresh ids drawn for every row."""
        with self._transaction("retain many") as conn:
            now = self._now_ms()
            params = self._params(now)
            tenant, spec, session = params["tenant"], params["spec"], params["session"]
            ids = [new_memory_id() for _ in news]
            clean = [
                (i, new) for i, (new, hit) in enumerate(zip(news, hits, strict=True)) if hit is None
            ]
            if clean:
                with conn.cursor().copy(
                    "COPY facts (id, tenant, spec, session, text, norm_text, terms, tags, "
                    "created_at, expires_at, session_id, evidence, scope, subject) FROM STDIN"
                ) as copy:
                    for i, new in clean:
                        copy.write_row(
                            (
                                ids[i],
                                tenant,
                                spec,
                                session,
                                new.text,
                                new.norm_text,
                                document_terms(new.text, new.tags),
                                list(new.tags),
                                now,
                                None if new.ttl_ms is None else now + new.ttl_ms,
                                new.provenance.session_id,
                                list(new.provenance.evidence),
                                new.scope.scope,
                                subject_of(new.scope),
                            )
                        )
            if clean and vectors is not None and self._embedder is not None:
                assert self._dim is not None
                with conn.cursor().copy(
                    f"COPY {_vector_table(self._dim)} "
                    "(fact_id, tenant, spec, session, embedder, embedding) FROM STDIN"
                ) as copy:
                    for (i, _), vector in zip(clean, vectors, strict=True):
                        copy.write_row((ids[i], tenant, spec, session, self._embedder.id, vector))
            held = [
                (i, new, hit) for i, (new, hit) in enumerate(zip(news, hits, strict=True)) if hit
            ]
            for i, new, hit in held:
                _insert_held(conn, ids[i], new, hit.label, params)
            return [
                RetainResult(
                    ids[i], True, _expiry(new, now), None, None if hit is None else hit.label
                )
                for i, (new, hit) in enumerate(zip(news, hits, strict=True))
            ]

    def _tombstone(
        self,
        conn: Connection[Any],
        ids: Sequence[str],
        kind: str,
        reason: str | None,
        params: dict[str, Any],
    ) -> list[str]:
        done: list[str] = []
        for fact_id in ids:
            row = conn.execute(
                "INSERT INTO tombstones (target, tenant, spec, session, kind, at, reason) "
                "SELECT f.id, f.tenant, f.spec, f.session, %(kind)s, %(now)s, %(reason)s "
                f"FROM facts f WHERE f.id = %(id)s AND {_SCOPE} "
                "ON CONFLICT (target) DO NOTHING RETURNING target",
                {**params, "id": fact_id, "kind": kind, "reason": reason},
            ).fetchone()
            if row is not None:
                done.append(row[0])
        return done

    def _ranking(self, request: RecallRequest) -> list[ProviderHit]:
        terms = query_terms(search_text(request))
        if not terms:
            return []
        limit = request.limit
        depth = max(MIN_DEPTH, 4 * limit)
        vector = None if self._embedder is None else self._vector([search_text(request)])
        # Only the caller's visible scope keys, and plain facts or the asked tiers.
        where, where_params = visible_clause(request.visible, request.tiers)
        with self._transaction("recall") as conn:
            params = {**self._params(self._now_ms()), "k": limit}
            lexical = bm25.ranked(
                conn, params, terms, limit if vector is None else depth, where, where_params
            )
            if vector is None:
                rows = lexical
            else:
                assert self._dim is not None and self._embedder is not None
                # pgvector >= 0.8: keep scanning the HNSW index until ``depth`` rows pass the
                # scope filters (without it a scope other tenants dominate gets fewer hits).
                conn.execute(
                    "SELECT set_config('hnsw.iterative_scan', 'relaxed_order', true), "
                    "set_config('hnsw.ef_search', %s, true)",
                    (str(min(HNSW_EF_SEARCH_MAX, max(HNSW_EF_SEARCH, depth))),),
                )
                rows = conn.execute(
                    _hybrid_sql(_vector_table(self._dim), where),
                    {
                        **params,
                        **where_params,
                        "lexical": [row[0] for row in lexical],
                        "depth": depth,
                        "vec": vector[0],
                        "embedder": self._embedder.id,
                    },
                ).fetchall()
        return [
            ProviderHit(
                row[0],
                row[1],
                tuple(row[2]),
                unit_score(float(row[6])),
                bool(row[5]),
                scope=key_of(row[7], row[8]),
                key=row[9],
                tier=row[10],
            )
            for row in rows
        ]

    def _vector(self, texts: list[str]) -> list[str] | None:
        """``texts`` embedded as pgvector literals; None without an embedder or when it fails
        (a fact is then stored without a vector; a query is ranked by full text alone)."""
        if self._embedder is None:
            return None
        try:
            rows = self._embedder.embed(texts)
        except Exception:  # an embedder failure must never fail a write or a recall
            return None
        return ["[" + ",".join(format(float(x), ".8g") for x in row) + "]" for row in rows]

    def _screened(self, new: NewFact) -> InjectionHit | None:
        if self._screen is None:
            return None
        found: InjectionHit | None = self._screen("\n".join([new.text, *new.tags]))
        return found

    def _hold(self, new: NewFact, hit: InjectionHit) -> RetainResult:
        with self._transaction("quarantine a memory") as conn:
            now = self._now_ms()
            fact_id = new_memory_id()
            _insert_held(conn, fact_id, new, hit.label, self._params(now))
            return RetainResult(fact_id, True, _expiry(new, now), None, hit.label)

    def _flagged_on_read(self, hits: Sequence[ProviderHit | FactRecord]) -> dict[str, str]:
        flagged: dict[str, str] = {}
        if self._screen is None:
            return flagged
        for hit in hits:
            if hit.id in self._clean:
                continue
            found = self._screen("\n".join([hit.text, *hit.tags]))
            if found is None:
                if len(self._clean) > 100_000:
                    self._clean.clear()
                self._clean.add(hit.id)
            else:
                flagged[hit.id] = found.label
        return flagged

    def _hold_on_read(self, flagged: dict[str, str]) -> None:
        """Copy each flagged stored fact into quarantine and tombstone it (forgotten)."""
        with self._transaction("quarantine a memory") as conn:
            params = self._params(self._now_ms())
            for fact_id, rule in flagged.items():
                conn.execute(
                    f"""INSERT INTO quarantine (id, tenant, spec, session, text, tags,
                    created_at, ttl_ms, session_id, evidence, rule, found_on, scope, subject,
                    fact_key, tier)
                    SELECT f.id, f.tenant, f.spec, f.session, f.text, f.tags, %(now)s,
                    CASE WHEN f.expires_at IS NULL THEN NULL
                         ELSE greatest(1, f.expires_at - f.created_at) END,
                    f.session_id, f.evidence, %(rule)s, 'read', f.scope, f.subject,
                    f.fact_key, f.tier
                    FROM facts f WHERE f.id = %(id)s AND {_SCOPE}
                    ON CONFLICT (id) DO NOTHING""",
                    {**params, "id": fact_id, "rule": rule},
                )
                self._tombstone(conn, [fact_id], "forgotten", f"quarantined: {rule}", params)


def _insert_held(
    conn: Connection[Any],
    fact_id: str,
    new: NewFact,
    rule: str,
    params: dict[str, Any],
) -> None:
    """Hold a write the scanner flagged in ``quarantine`` (never in ``facts``)."""
    conn.execute(
        """INSERT INTO quarantine (id, tenant, spec, session, text, tags, created_at,
        ttl_ms, session_id, evidence, rule, found_on, scope, subject, fact_key, tier)
        VALUES (%(id)s, %(tenant)s, %(spec)s, %(session)s, %(text)s, %(tags)s, %(now)s,
        %(ttl)s, %(session_id)s, %(evidence)s, %(rule)s, 'write', %(fact_scope)s,
        %(fact_subject)s, %(fact_key)s, %(tier)s)""",
        {
            **params,
            **key_params(new.scope),
            "fact_key": new.key,
            "tier": new.tier,
            "id": fact_id,
            "text": new.text,
            "tags": list(new.tags),
            "ttl": new.ttl_ms,
            "session_id": new.provenance.session_id,
            "evidence": list(new.provenance.evidence),
            "rule": rule,
        },
    )


def _hybrid_sql(table: str, where: str) -> str:
    """Full-text and cosine rankings (each cut at ``depth``), fused by RRF in SQL.

    The cosine side orders by the distance alone (no tie-breaker) under its ``LIMIT``, so the
    planner can walk the HNSW index instead of sorting every vector of the scope; with
    ``hnsw.iterative_scan`` (set per transaction by ``_ranking``) the walk goes on past the
    rows the scope and liveness filters drop until ``depth`` rows are found. ``where``: the
    caller's visible scope keys and tiers (``visible_clause``), on both rankings."""
    return f"""
WITH lexical AS (
    SELECT l.id, l.rank FROM unnest(%(lexical)s::text[]) WITH ORDINALITY AS l(id, rank)
),
nearest AS (
    SELECT n.id, row_number() OVER (ORDER BY n.distance, n.seq) AS rank
    FROM (
        SELECT v.fact_id AS id, f.seq, v.embedding <=> %(vec)s::vector AS distance
        FROM {table} v JOIN facts f ON f.id = v.fact_id
        WHERE v.tenant = %(tenant)s AND v.spec = %(spec)s AND v.session = %(session)s
            AND v.embedder = %(embedder)s AND {_LIVE} AND {where}
        ORDER BY v.embedding <=> %(vec)s::vector LIMIT %(depth)s
    ) AS n
),
fused AS (
    SELECT id, sum(1.0 / ({RRF_K} + rank)) AS rrf
    FROM (SELECT id, rank FROM lexical UNION ALL SELECT id, rank FROM nearest) AS both_rankings
    GROUP BY id
)
SELECT {_COLUMNS},
    fused.rrf + (CASE WHEN {_PROVEN} THEN {PROOF_BOOST!r} ELSE 0 END) AS score,
    {_SCOPE_COLUMNS}
FROM fused JOIN facts f ON f.id = fused.id
WHERE {_SCOPE}
ORDER BY score DESC, f.seq LIMIT %(k)s"""


def _tsquery(terms: Sequence[str], *, every: bool = False) -> str:
    """A ``to_tsquery`` string of quoted terms (tokens hold only letters, marks and digits)."""
    quoted = ["'" + term.replace("'", "''").replace("\\", "\\\\") + "'" for term in terms]
    return (" & " if every else " | ").join(quoted)


def _size(new: NewFact) -> int:
    """UTF-8 bytes of the text stored (``RetainResult.bytes``)."""
    return len(new.text.encode("utf-8"))


def _embedded(new: NewFact) -> str:
    """What a fact's vector is computed from."""
    return " ".join([new.text, *new.tags])


def _expiry(new: NewFact, now: int) -> datetime | None:
    return None if new.ttl_ms is None else from_ms(now + new.ttl_ms)


def _when(ms: int | None) -> datetime | None:
    return None if ms is None else from_ms(int(ms))


def _brief(exc: BaseException) -> str:
    """An error's class and first line, without a DETAIL (which may quote row values)."""
    first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return f"{type(exc).__name__}: {first[:200]}" if first else type(exc).__name__


@contextmanager
def _translated(what: str) -> Iterator[None]:
    """psycopg and pool errors become ``StoreError`` (their message never quotes row values)."""
    import psycopg
    from psycopg_pool import PoolTimeout

    try:
        yield
    except StoreError:
        raise
    except PoolTimeout as exc:
        raise StoreError(f"could not {what}: no database connection in time") from exc
    except psycopg.errors.QueryCanceled as exc:
        raise StoreError(f"could not {what}: the database did not answer in time") from exc
    except psycopg.Error as exc:
        state = getattr(exc, "sqlstate", None) or "?"
        raise StoreError(
            f"could not {what}: database error {state} ({type(exc).__name__})"
        ) from exc
