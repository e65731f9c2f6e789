"""``codegen memory usage``: a tenant's usage ledger, as the managed host records it.

Per spec: the turns' totals (what the tenant's budget is enforced from: ``turns``, input,
output and cached tokens) and, as a kind of their own, the scheduled dream's model phases
(runs, calls, tokens and cost in USD), which are never counted against the turn budget
(``runtime.usage``). On files the ledgers are ``<state root>/usage/<spec>.json`` (``--tenant
ID`` for a managed tenant's root); with ``--backend postgres`` (``memory.state: postgres``)
the tenant's rows of ``usage_ledgers``. ``--spec NAME`` shows one spec. Read-only.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from specwire.runtime.core.fragment import storage_name
from specwire.runtime.owner.output import print_json
from specwire.runtime.owner.selection import SelectionError, state_root
from specwire.runtime.usage.files import USAGE_DIRNAME, read_ledger
from specwire.runtime.usage.totals import DreamUsage, TenantUsage

Ledgers = list[tuple[str, TenantUsage, DreamUsage]]


def run(args: argparse.Namespace) -> int:
    if args.backend == "http":
        raise SelectionError("usage lives under --root or in PostgreSQL: drop --backend http")
    found = _in_database(args) if args.backend == "postgres" else _on_files(args)
    if args.json:
        print_json([_as_json(spec, turns, dream) for spec, turns, dream in found])
        return 0
    if not found:
        sys.stdout.write("no usage recorded\n")
        return 0
    out = sys.stdout
    for spec, turns, dream in found:
        out.write(
            f"{spec}: {turns.turns} turn(s), {turns.input} input ({turns.cached} cached) and "
            f"{turns.output} output tokens\n"
            f"  dream (not in the turn budget): {dream.runs} run(s), {dream.calls} call(s), "
            f"{dream.input} input ({dream.cached} cached) and {dream.output} output tokens, "
            f"${dream.cost_usd:.6f}\n"
        )
    return 0


def _as_json(spec: str, turns: TenantUsage, dream: DreamUsage) -> dict[str, Any]:
    return {
        "spec": spec,
        "turns": {
            "turns": turns.turns,
            "input": turns.input,
            "output": turns.output,
            "cached": turns.cached,
        },
        "dream": {
            "runs": dream.runs,
            "calls": dream.calls,
            "input": dream.input,
            "output": dream.output,
            "cached": dream.cached,
            "costUsd": dream.cost_usd,
        },
    }


def _on_files(args: argparse.Namespace) -> Ledgers:
    folder = state_root(args.root, args.tenant) / USAGE_DIRNAME
    if not folder.is_dir() or folder.is_symlink():
        return []
    wanted = None if args.spec is None else f"{storage_name(args.spec)}.json"
    found: Ledgers = []
    for path in sorted(folder.glob("*.json")):
        if wanted is not None and path.name != wanted:
            continue
        if path.is_symlink() or not path.is_file():
            raise SelectionError(f"the usage ledger {path} is not a regular file")
        turns, dream = read_ledger(path)
        found.append((args.spec or Path(path.name).stem, turns, dream))
    return found


def _in_database(args: argparse.Namespace) -> Ledgers:
    from specwire.runtime.core.fragment_data import FactsData
    from specwire.runtime.facts.providers.connect import DEFAULT_TENANT, shared_postgres_pool
    from specwire.runtime.owner.database_tenancy import check_tenant, database_spec
    from specwire.runtime.usage.database import read_row, specs_of

    # A typo (tenant or spec) must not read as "no usage".
    if args.spec is not None:
        database_spec(args.dsn, args.tenant, args.spec)
    else:
        check_tenant(args.dsn, args.tenant)
    tenant = args.tenant if args.tenant is not None else DEFAULT_TENANT
    pool = shared_postgres_pool(FactsData(backend="postgres", dsn=args.dsn))
    with pool.connection() as conn:
        specs = [args.spec] if args.spec is not None else specs_of(conn, tenant)
        return [(spec, *read_row(conn, tenant, spec)) for spec in specs]
