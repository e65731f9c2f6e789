"""Each tenant's token usage in PostgreSQL (``memory.state: postgres``): the usage ledger's twin.

One row per tenant and spec in ``usage_ledgers``. Recording a turn is one statement that locks
the row (``INSERT … ON CONFLICT DO UPDATE`` adds to the totals under the row lock and returns
them), so workers on any number of hosts add to one ledger without losing a turn; a budget
check reads the row every worker writes. A row that cannot be read fails closed, as the file
ledger does.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from specwire.runtime.core.errors import StoreError
from specwire.runtime.hosts.http.usage_ledger import TenantUsage
from specwire.runtime.models import Usage
from specwire.runtime.pg.migrations import migrate_once
from specwire.runtime.pg.pool import translated

if TYPE_CHECKING:
    from psycopg_pool import ConnectionPool

COMPONENT: Final = "usage"

USAGE_MIGRATIONS: Final[tuple[tuple[int, tuple[str, ...]], ...]] = (
    (
        1,
        (
            """CREATE TABLE usage_ledgers (
                tenant text NOT NULL,
                spec text NOT NULL,
                input bigint NOT NULL DEFAULT 0 CHECK (input >= 0),
                output bigint NOT NULL DEFAULT 0 CHECK (output >= 0),
                cached bigint NOT NULL DEFAULT 0 CHECK (cached >= 0),
                turns bigint NOT NULL DEFAULT 0 CHECK (turns >= 0),
                estimated bigint NOT NULL DEFAULT 0 CHECK (estimated >= 0),
                PRIMARY KEY (tenant, spec)
            )""",
        ),
    ),
)

_TOTALS: Final = "input, output, cached, turns, estimated"


class PostgresUsageLedger:
    """One tenant's usage of one spec, in the database (``UsageLedger``'s interface)."""

    def __init__(self, pool: ConnectionPool[Any], *, tenant: str, spec: str) -> None:
        self.pool = pool
        self.tenant = tenant
        self.spec = spec
        migrate_once(pool, COMPONENT, USAGE_MIGRATIONS)

    def read(self) -> TenantUsage:
        with translated("read the usage ledger"), self.pool.connection() as conn:
            row = conn.execute(
                f"SELECT {_TOTALS} FROM usage_ledgers WHERE tenant = %s AND spec = %s",
                (self.tenant, self.spec),
            ).fetchone()
        return _usage(row) if row is not None else TenantUsage()

    def add(self, usage: Usage, *, estimated: int = 0) -> TenantUsage:
        """Record one turn's ``usage`` (``estimated``: what admission reserved for its message)
        under the ledger row's lock; the new totals."""
        with translated("record usage"), self.pool.connection() as conn:
            row = conn.execute(
                f"INSERT INTO usage_ledgers (tenant, spec, {_TOTALS}) "
                "VALUES (%s, %s, %s, %s, %s, 1, %s) "
                "ON CONFLICT (tenant, spec) DO UPDATE SET "
                "input = usage_ledgers.input + EXCLUDED.input, "
                "output = usage_ledgers.output + EXCLUDED.output, "
                "cached = usage_ledgers.cached + EXCLUDED.cached, "
                "turns = usage_ledgers.turns + 1, "
                "estimated = usage_ledgers.estimated + EXCLUDED.estimated "
                f"RETURNING {_TOTALS}",
                (
                    self.tenant,
                    self.spec,
                    max(0, usage.input),
                    max(0, usage.output),
                    max(0, usage.cached),
                    max(0, estimated),
                ),
            ).fetchone()
        if row is None:
            raise StoreError("the usage ledger did not record the turn")
        return _usage(row)


def _usage(row: Any) -> TenantUsage:
    return TenantUsage(*(int(value) for value in row))
