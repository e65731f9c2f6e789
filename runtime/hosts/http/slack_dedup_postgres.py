"""Slack's retry de-duplication in PostgreSQL (``memory.state: postgres``): ``SeenEvents``'
twin, shared by every worker and kept across restarts.

Slack retries an event it did not see acknowledged in time, and a retry may reach another
worker, or this one after a restart. Each event's keys (its id, and its channel and timestamp)
are recorded in ``slack_dedup`` (``(tenant, spec, key)``, with the time first seen); an event is
answered only when none of its keys was seen in the window. One transaction per event: expired
keys of the spec are dropped, then the keys inserted; the row lock of a key two workers insert
at once makes one of them the first.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from specwire.runtime.pg.migrations import migrate_once
from specwire.runtime.pg.pool import translated

if TYPE_CHECKING:
    from psycopg_pool import ConnectionPool

COMPONENT: Final = "slack_dedup"

SLACK_DEDUP_MIGRATIONS: Final[tuple[tuple[int, tuple[str, ...]], ...]] = (
    (
        1,
        (
            """CREATE TABLE slack_dedup (
                tenant text NOT NULL,
                spec text NOT NULL,
                key text NOT NULL,
                seen_at timestamptz NOT NULL DEFAULT now(),
                PRIMARY KEY (tenant, spec, key)
            )""",
            "CREATE INDEX slack_dedup_expiry ON slack_dedup (tenant, spec, seen_at)",
        ),
    ),
)


class PostgresSeenEvents:
    """Event keys seen in the last ``window_s`` seconds, for one spec, in the database."""

    def __init__(
        self, pool: ConnectionPool[Any], *, tenant: str, spec: str, window_s: float = 3600.0
    ) -> None:
        self.pool = pool
        self.tenant = tenant
        self.spec = spec
        self.window_s = window_s
        migrate_once(pool, COMPONENT, SLACK_DEDUP_MIGRATIONS)

    def first_time(self, *keys: str, now: float | None = None) -> bool:
        """Record ``keys``; True when none of them was seen in the window (``now`` is
        ``SeenEvents``' and unused: the database's clock is every worker's)."""
        scope = (self.tenant, self.spec)
        with (
            translated("check Slack's retries"),
            self.pool.connection() as conn,
            conn.transaction(),
        ):
            conn.execute(
                "DELETE FROM slack_dedup WHERE tenant = %s AND spec = %s "
                "AND seen_at < now() - make_interval(secs => %s)",
                (*scope, self.window_s),
            )
            fresh = True
            for key in sorted(set(keys)):  # one order: two workers never wait on each other
                row = conn.execute(
                    "INSERT INTO slack_dedup (tenant, spec, key) VALUES (%s, %s, %s) "
                    "ON CONFLICT (tenant, spec, key) DO UPDATE SET seen_at = now() "
                    "RETURNING (xmax = 0)",
                    (*scope, key),
                ).fetchone()
                fresh = fresh and bool(row and row[0])
        return fresh
