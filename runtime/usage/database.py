"""A usage ledger's row in PostgreSQL (``usage_ledgers``, one per tenant and spec; its schema
and its migrations are here, below the owner's commands; the serving hosts' ledger is
``runtime.hosts.http.usage_postgres``): the turns' totals and, from schema version 3, the
dream's (``dream_*`` columns). Read here by the owner's ``codegen memory usage``; written here
only by ``codegen memory migrate`` (``adopt_row``: a ledger moved from files, whole)."""

from __future__ import annotations

from typing import Any, Final, Literal

from specwire.runtime.usage.totals import DreamUsage, TenantUsage

TURN_COLUMNS: Final = "input, output, cached, turns, estimated"
DREAM_COLUMNS: Final = (
    "dream_runs, dream_calls, dream_input, dream_output, dream_cached, dream_cost_micro_usd"
)

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
            """CREATE TABLE usage_reservations (
                tenant text NOT NULL,
                spec text NOT NULL,
                ticket text NOT NULL,
                input bigint NOT NULL CHECK (input >= 0),
                owner_pid integer NOT NULL,
                owner_since timestamptz NOT NULL,
                PRIMARY KEY (tenant, spec, ticket)
            )""",
        ),
    ),
    (
        2,
        (
            # The worker's advisory lock key; the backend pid and start are left null (a
            # reservation written before the key is still judged by them).
            "ALTER TABLE usage_reservations ADD COLUMN owner_key integer",
            "ALTER TABLE usage_reservations ALTER COLUMN owner_pid DROP NOT NULL, "
            "ALTER COLUMN owner_since DROP NOT NULL",
        ),
    ),
    (
        3,
        (
            # The scheduled dream's model phases, a kind of their own (``runtime.usage``):
            # never counted against the turn budget. Defaults: no table rewrite.
            "ALTER TABLE usage_ledgers "
            "ADD COLUMN dream_runs bigint NOT NULL DEFAULT 0 CHECK (dream_runs >= 0), "
            "ADD COLUMN dream_calls bigint NOT NULL DEFAULT 0 CHECK (dream_calls >= 0), "
            "ADD COLUMN dream_input bigint NOT NULL DEFAULT 0 CHECK (dream_input >= 0), "
            "ADD COLUMN dream_output bigint NOT NULL DEFAULT 0 CHECK (dream_output >= 0), "
            "ADD COLUMN dream_cached bigint NOT NULL DEFAULT 0 CHECK (dream_cached >= 0), "
            "ADD COLUMN dream_cost_micro_usd bigint NOT NULL DEFAULT 0 "
            "CHECK (dream_cost_micro_usd >= 0)",
        ),
    ),
)

Adopted = Literal["copied", "present", "differs"]


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


def adopt_row(conn: Any, tenant: str, spec: str, turns: TenantUsage, dream: DreamUsage) -> Adopted:
    """Give ``(tenant, spec)`` the totals of a ledger moved here, in one transaction under the
    row's lock (the tables migrated: ``USAGE_MIGRATIONS``): ``copied`` into a row that counts
    nothing yet (absent, or only admitted to), ``present`` when it holds these totals already
    (a second migrate), ``differs`` when it counts something else (left alone: never added to,
    never overwritten)."""
    with conn.transaction():
        conn.execute(
            "INSERT INTO usage_ledgers (tenant, spec) VALUES (%s, %s) ON CONFLICT DO NOTHING",
            (tenant, spec),
        )
        row = conn.execute(
            f"SELECT {TURN_COLUMNS}, {DREAM_COLUMNS} FROM usage_ledgers "
            "WHERE tenant = %s AND spec = %s FOR UPDATE",
            (tenant, spec),
        ).fetchone()
        values = [int(value) for value in row] if row is not None else [0] * 11
        held = (TenantUsage(*values[:5]), DreamUsage(*values[5:]))
        if held == (turns, dream):
            return "present"
        if held != (TenantUsage(), DreamUsage()):
            return "differs"
        conn.execute(
            "UPDATE usage_ledgers SET input = %s, output = %s, cached = %s, turns = %s, "
            "estimated = %s, dream_runs = %s, dream_calls = %s, dream_input = %s, "
            "dream_output = %s, dream_cached = %s, dream_cost_micro_usd = %s "
            "WHERE tenant = %s AND spec = %s",
            (
                turns.input,
                turns.output,
                turns.cached,
                turns.turns,
                turns.estimated,
                *dream.values(),
                tenant,
                spec,
            ),
        )
    return "copied"
