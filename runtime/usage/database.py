"""A usage ledger's row in PostgreSQL (``usage_ledgers``, one per tenant and spec; its schema
is ``runtime.hosts.http.usage_postgres``'s): the turns' totals and, from schema version 3, the
dream's (``dream_*`` columns). Read-only here: the owner's ``codegen memory usage``."""

from __future__ import annotations

from typing import Any, Final

from specwire.runtime.usage.totals import DreamUsage, TenantUsage

TURN_COLUMNS: Final = "input, output, cached, turns, estimated"
DREAM_COLUMNS: Final = (
    "dream_runs, dream_calls, dream_input, dream_output, dream_cached, dream_cost_micro_usd"
)


def read_row(conn: Any, tenant: str, spec: str) -> tuple[TenantUsage, DreamUsage]:
    """The totals of ``(tenant, spec)`` (zeros when the table or the row is not there yet; the
    dream's zeros when its columns are not, a database no serving host has migrated)."""
    if not _has(conn, "usage_ledgers"):
        return TenantUsage(), DreamUsage()
    dream = _has_dream_columns(conn)
    columns = TURN_COLUMNS + (", " + DREAM_COLUMNS if dream else "")
    row = conn.execute(
        f"SELECT {columns} FROM usage_ledgers WHERE tenant = %s AND spec = %s", (tenant, spec)
    ).fetchone()
    if row is None:
        return TenantUsage(), DreamUsage()
    values = [int(value) for value in row]
    return TenantUsage(*values[:5]), DreamUsage(*values[5:]) if dream else DreamUsage()


def specs_of(conn: Any, tenant: str) -> list[str]:
    """The specs with a ledger row of ``tenant``, sorted."""
    if not _has(conn, "usage_ledgers"):
        return []
    rows = conn.execute(
        "SELECT spec FROM usage_ledgers WHERE tenant = %s ORDER BY spec", (tenant,)
    ).fetchall()
    return [row[0] for row in rows]


def _has(conn: Any, table: str) -> bool:
    row = conn.execute("SELECT to_regclass(%s) IS NOT NULL", (f"public.{table}",)).fetchone()
    return bool(row and row[0])


def _has_dream_columns(conn: Any) -> bool:
    row = conn.execute(
        "SELECT count(*) FROM information_schema.columns WHERE table_schema = 'public' "
        "AND table_name = 'usage_ledgers' AND column_name = 'dream_runs'"
    ).fetchone()
    return bool(row and row[0])
