"""Which tenants and specs a PostgreSQL database holds, for the owner's commands on a fleet
whose workers share nothing but the database (``--backend postgres``).

A worker of such a fleet starts in an empty folder, and so does the owner's machine: the
tenant's root folder, which the file backend looks for, does not exist. The database is the
record instead: a tenant (and a spec of it) exists when any of its tables holds a row of it
(facts, held writes, documents, session logs, state documents, the usage ledger). Read-only:
nothing is created, not even a missing table.
"""

from __future__ import annotations

from typing import Any, Final

from specwire.runtime.core.fragment_data import FactsData
from specwire.runtime.owner.selection import SelectionError

# Every table that keeps rows per (tenant, spec); a database may hold only some of them.
TENANT_TABLES: Final = (
    "facts",
    "quarantine",
    "documents",
    "session_log_events",
    "state_documents",
    "usage_ledgers",
)


def specs_in_database(dsn: str | None, tenant: str | None) -> list[str]:
    """The specs ``tenant`` (``None``: any tenant) keeps any row of, sorted (``dsn``: the
    ``$VAR`` reference, as ``--dsn`` takes it). The database not reached is a
    ``SelectionError`` (one line)."""
    from specwire.runtime.facts.providers.connect import shared_postgres_pool

    try:
        pool = shared_postgres_pool(FactsData(backend="postgres", dsn=dsn))
        with pool.connection() as conn:
            return _specs(conn, tenant)
    except SelectionError:
        raise
    except Exception as exc:  # psycopg's errors (the DSN is a registered secret: redacted)
        if isinstance(exc, ImportError):
            raise SelectionError(
                f"--backend postgres needs {exc.name}: pip install 'specwire[postgres]'"
            ) from None
        first = (str(exc).splitlines() or [""])[0]
        raise SelectionError(f"PostgreSQL: {type(exc).__name__}: {first}") from None


def _specs(conn: Any, tenant: str | None) -> list[str]:
    present = [table for table in TENANT_TABLES if _has(conn, table)]
    if not present:
        return []
    where = "" if tenant is None else " WHERE tenant = %s"
    union = " UNION ".join(f"SELECT spec FROM {table}{where}" for table in present)
    rows = conn.execute(union, () if tenant is None else (tenant,) * len(present)).fetchall()
    return sorted({row[0] for row in rows})


def _has(conn: Any, table: str) -> bool:
    row = conn.execute("SELECT to_regclass(%s) IS NOT NULL", (f"public.{table}",)).fetchone()
    return bool(row and row[0])


def database_spec(dsn: str | None, tenant: str | None, spec: str | None) -> str:
    """The spec a command on the database works on, checked against what the database holds:
    ``spec`` when ``tenant`` (``None``: the default tenant, a bundle's without tenants) keeps
    rows of it, else the one spec it keeps. An unknown tenant, an unknown spec or a tenant of
    several specs without ``--spec`` is a ``SelectionError`` (one line); a verb that may write
    a tenant's first memory (``import``) does not ask."""
    from specwire.runtime.facts.providers.connect import DEFAULT_TENANT

    named = "the default tenant" if tenant is None else f"tenant {tenant!r}"
    specs = specs_in_database(dsn, tenant if tenant is not None else DEFAULT_TENANT)
    if not specs:
        if tenant is not None:
            raise SelectionError(f"--tenant {tenant!r}: no such tenant in the database")
        raise SelectionError(
            f"no memory of {named} in the database (a managed bundle's: pass --tenant ID)"
        )
    if spec is not None:
        if spec not in specs:
            raise SelectionError(
                f"--spec {spec!r}: {named} keeps no memory of it in the database "
                f"(it has: {', '.join(specs)})"
            )
        return spec
    if len(specs) == 1:
        return specs[0]
    raise SelectionError(
        f"{named} keeps several specs in the database: pass --spec ({', '.join(specs)})"
    )


def check_tenant(dsn: str | None, tenant: str | None) -> None:
    """``SelectionError`` (one line) unless ``tenant`` (``None``: nothing to check) keeps a
    row in the database."""
    if tenant is not None and not specs_in_database(dsn, tenant):
        raise SelectionError(f"--tenant {tenant!r}: no such tenant in the database")
