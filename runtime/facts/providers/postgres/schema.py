"""The PostgreSQL fact schema: its versioned migrations, applied at start-up in one
transaction under ``pg_advisory_xact_lock`` (several processes starting at once apply each
version once), and the vector table of each embedding dimension.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from specwire.runtime.core.errors import StoreError
from specwire.runtime.core.scopes import SCOPES
from specwire.runtime.facts.model import TIERS
from specwire.runtime.facts.providers.postgres import term_stats

if TYPE_CHECKING:
    from psycopg_pool import ConnectionPool


def _sql_list(values: Sequence[str]) -> str:
    """Constant identifiers (``SCOPES``, ``TIERS``) as a quoted SQL list."""
    return ", ".join("'" + value.replace("'", "''") + "'" for value in values)


# Any fixed 64-bit number: the advisory lock migrations run under.
MIGRATION_LOCK = 0x5EC_F1AC7_5C4E3A


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
            # Held writes the owner released: recall does not hold them again.
            """CREATE TABLE released (
                id text PRIMARY KEY,
                tenant text NOT NULL,
                spec text NOT NULL,
                session text NOT NULL,
                rule text NOT NULL,
                at bigint NOT NULL
            )""",
            """CREATE TABLE sweeps (
                tenant text NOT NULL,
                spec text NOT NULL,
                session text NOT NULL,
                swept_at bigint NOT NULL,
                PRIMARY KEY (tenant, spec, session)
            )""",
        ),
    ),
    # The BM25 postings (``term_stats.POSTINGS_MIGRATION``): the exact ranking of queries of
    # common words from an index-only scan (``bm25``).
    (4, term_stats.POSTINGS_MIGRATION),
    # The trigger functions' cheaper statements (``term_stats.FUNCTIONS_MIGRATION``: the bulk
    # path's postings no longer sort every (fact, word) pair with the fact's text).
    (5, term_stats.FUNCTIONS_MIGRATION),
)
SCHEMA_VERSION = MIGRATIONS[-1][0]


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
            table = vector_table(vector_dim)
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


def migrate_once(pool: ConnectionPool[Any], dim: int | None) -> int:
    """``migrate`` once per pool and vector dimension: providers built per tenant or per turn
    on a shared pool do not each take the migration lock."""
    with _migrated_lock:
        done = _migrated.setdefault(pool, {})
        if dim not in done:
            done[dim] = migrate(pool, vector_dim=dim)
        return done[dim]


def vector_table(dim: int) -> str:
    if isinstance(dim, bool) or not isinstance(dim, int) or not 1 <= dim <= 16000:
        raise StoreError(f"embedding dimension out of range: {dim!r}")
    return f"fact_vectors_{dim}"
