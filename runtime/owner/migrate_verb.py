"""``codegen memory migrate --from file|postgres|http --to file|postgres|http``: move an agent's
memory to another backend, as it is.

Every fact is copied with its id, ``createdAt`` and expiry, tags, provenance, scope key, key
and tier, its tombstone (kind, time, reason) and its supersede link, and every held write with
its id, rule and time (``runtime.facts.restoring``). The copy goes in batches of ``--batch``
facts, one transaction each, so a run cut short (a crash, Ctrl-C) leaves whole batches behind
and the next run copies only what is missing; a run with nothing left copies 0 and says so.
At the end both sides are read again and compared: their counts and the sha256 of their
sorted records (``runtime.owner.migration``); a mismatch exits 3.

Connections come from flags, as ``--backend`` takes them (secret references, never values):
``--from-dsn``/``--to-dsn`` (default: ``--dsn``, ``$DATABASE_URL``). The file side is the
store under ``--root`` (the source) and ``--to-root`` (the target, default ``--root``); the
target folder need not exist (the agent need not have run there). Both sides are the same spec
(``--spec``, else the one spec under ``--root``) and tenant (``--tenant``).

A memory service (``http``) is read and written through the contract's owner transfer
(``/v1/export``, ``/v1/restore``: ``runtime.facts.providers.http.transfer_client``):
``--from-url``/``--to-url`` (default ``--url``) name it, ``--from-token``/``--to-token``
(default ``$MEMORY_OWNER_TOKEN``) the variable holding the tenant's *owner* token, which the
service keeps apart from the agent's (``specwire-memory-server --owner-tokens``).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager
from datetime import datetime
from pathlib import Path
from typing import Any, TypeVar

from specwire.runtime.core.clock import Clock, utc_now
from specwire.runtime.core.progress import Progress
from specwire.runtime.owner.asking import confirm
from specwire.runtime.owner.backend import BACKENDS, OwnerFacts, open_backend, remote_spec
from specwire.runtime.owner.database_tenancy import database_spec
from specwire.runtime.owner.migration import Digest, Snapshot, digest, plan
from specwire.runtime.owner.output import report
from specwire.runtime.owner.selection import Selection, SelectionError, select, select_remote
from specwire.runtime.owner.state_migration import (
    DatabaseSide,
    FileSide,
    StateCopy,
    copy_state,
    pending,
)
from specwire.runtime.owner.tier_migration import (
    DatabaseSessions,
    DatabaseUsage,
    FileSessions,
    FileUsage,
    SessionCopy,
    SessionPlan,
    Totals,
    UsageCopy,
    copy_sessions,
    copy_usage,
    sessions_pending,
    usage_pending,
)
from specwire.runtime.owner.transfer_backend import open_transfer

EXIT_MISMATCH = 3
DEFAULT_BATCH = 1000
MAX_BATCH = 10_000
DEFAULT_OWNER_TOKEN = "$MEMORY_OWNER_TOKEN"
_T = TypeVar("_T")


def add_migrate_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--from", dest="source", choices=BACKENDS, required=True, help="where the facts are"
    )
    parser.add_argument(
        "--to", dest="target", choices=BACKENDS, required=True, help="where they go"
    )
    parser.add_argument(
        "--from-dsn",
        metavar="$VAR",
        help="postgres source: the variable holding its DSN (default: --dsn)",
    )
    parser.add_argument(
        "--to-dsn",
        metavar="$VAR",
        help="postgres target: the variable holding its DSN (default: --dsn)",
    )
    parser.add_argument(
        "--from-url", help="http source: the memory service's URL or $VAR (default: --url)"
    )
    parser.add_argument(
        "--to-url", help="http target: the memory service's URL or $VAR (default: --url)"
    )
    parser.add_argument(
        "--from-token",
        metavar="$VAR",
        default=DEFAULT_OWNER_TOKEN,
        help=f"http source: the variable holding the tenant's owner token (default: "
        f"{DEFAULT_OWNER_TOKEN}; never the agent's token)",
    )
    parser.add_argument(
        "--to-token",
        metavar="$VAR",
        default=DEFAULT_OWNER_TOKEN,
        help=f"http target: the variable holding the tenant's owner token (default: "
        f"{DEFAULT_OWNER_TOKEN})",
    )
    parser.add_argument(
        "--to-root",
        type=Path,
        help="file target: the directory the agent runs in there (default: --root); it need "
        "not exist",
    )
    parser.add_argument(
        "--batch",
        type=int,
        default=DEFAULT_BATCH,
        help=f"facts per transaction (default {DEFAULT_BATCH}): what a cut-short run keeps",
    )


def run(args: argparse.Namespace) -> int:
    _check(args)
    spec = args.spec if args.spec is not None else _only_spec(args)
    if args.source == "postgres" and args.spec is not None:
        # A tenant or spec the database keeps nothing of is a typo: one line, nothing made.
        database_spec(args.from_dsn or args.dsn, args.tenant, spec)
    source_at = _source_selection(args, spec)
    target_at = select_remote(args.to_root or args.root, spec, args.tenant, None)
    instant = utc_now()

    def frozen() -> datetime:
        # One instant on both sides: a fact expiring mid-run must not differ between them.
        return instant

    # The usage ledger and the session logs are read and verified before anything is copied: a
    # damaged ledger stops the run here, a tampered log is refused whatever else moves.
    tiers_planned = _plan_tiers(args, source_at, target_at)
    with (
        _open(args, args.source, source_at, "from", create=False, now=frozen) as source,
        _open(args, args.target, target_at, "to", create=True, now=frozen) as target,
    ):
        if _same_store(source, target):
            raise SelectionError("the source and the target are the same store")
        with Progress(f"reading {source.name} and {target.name}") as reading, reading.ticking():
            before = _snapshot(source, "migrate --from")
            present = _snapshot(target, "migrate --to")
        todo = plan(before, present)
        restorer = target.restorer("migrate --to")
        copied = held = 0
        if not todo.empty:
            confirm(
                f"migrate {len(todo.facts)} fact(s) and {len(todo.held)} held write(s) from "
                f"{source.name} ({source.where}) to {target.name} ({target.where}); "
                f"{todo.facts_present} fact(s) and {todo.held_present} held write(s) are "
                "there already",
                assume_yes=args.yes,
            )
            total = len(todo.facts) + len(todo.held)
            with Progress("copying", total) as progress:
                for batch in _batches(todo.facts, args.batch):
                    copied += restorer.restore_facts(batch)
                    progress.advance(len(batch), "facts")
                for held_batch in _batches(todo.held, args.batch):
                    held += restorer.restore_quarantined(held_batch)
                    progress.advance(len(held_batch), "held writes")
        with Progress("verifying") as verifying, verifying.ticking():
            source_digest = digest(_snapshot(source, "migrate --from"))
            target_digest = digest(_snapshot(target, "migrate --to"))
    state = _migrate_state(args, source_at, target_at)
    tiers = _migrate_tiers(args, tiers_planned)
    failed = False
    if state is not None and not state.verified:
        sys.stderr.write(
            "codegen memory migrate: verification failed: the state documents differ"
            + (
                f" ({', '.join(state.differing[:3])} held other texts there already)"
                if state.differing
                else ""
            )
            + "\n"
        )
        failed = True
    if tiers is not None:
        usage, sessions = tiers
        if not usage.verified:
            sys.stderr.write(
                f"codegen memory migrate: the usage ledger was not copied: {usage.target} "
                "counts other totals already (left alone: a budget never counts a turn twice)\n"
            )
            failed = True
        for line in sessions.refused:
            sys.stderr.write(f"codegen memory migrate: {line}\n")
        if not sessions.refused and not sessions.verified:
            sys.stderr.write(
                "codegen memory migrate: verification failed: the session logs read back "
                "from the target differ\n"
            )
        failed = failed or not sessions.verified
    if failed:
        return EXIT_MISMATCH
    if source_digest != target_digest:
        sys.stderr.write(
            f"codegen memory migrate: verification failed: the source holds "
            f"{_described(source_digest)}, the target {_described(target_digest)} (did the "
            "agent write meanwhile? stop it and run migrate again)\n"
        )
        return EXIT_MISMATCH
    summary = (
        f"copied {copied} fact(s) and {held} held write(s) from {args.source} to "
        f"{args.target} ({todo.facts_present} fact(s) and {todo.held_present} held write(s) "
        f"were there already); verified: {_described(target_digest)} on both sides"
    )
    if state is not None:
        summary += (
            f"; state: copied {state.copied} document(s) ({state.present} there already), "
            f"verified (sha256 {state.target_sha256[:16]}…)"
        )
    if tiers is not None:
        usage, sessions = tiers
        summary += (
            f"; usage ledger: {_usage_said(usage)}; session logs: copied {sessions.copied} "
            f"({sessions.events} event(s), sealed again with the target's key; "
            f"{sessions.present} there already), verified (sha256 "
            f"{sessions.target_sha256[:16]}…)"
        )
    report(
        args,
        {
            "from": args.source,
            "to": args.target,
            "copied": {"facts": copied, "held": held},
            "alreadyThere": {"facts": todo.facts_present, "held": todo.held_present},
            "verified": True,
            "source": source_digest.as_json(),
            "target": target_digest.as_json(),
            **(
                {}
                if state is None
                else {
                    "state": {
                        "copied": state.copied,
                        "alreadyThere": state.present,
                        "sha256": state.target_sha256,
                    }
                }
            ),
            **(
                {}
                if tiers is None
                else {
                    "usage": tiers[0].as_json(),
                    "sessions": {
                        "copied": tiers[1].copied,
                        "events": tiers[1].events,
                        "alreadyThere": tiers[1].present,
                        "sha256": tiers[1].target_sha256,
                    },
                }
            ),
        },
        summary,
    )
    return 0


def _database(args: argparse.Namespace, side: str) -> tuple[Any, str]:
    """A postgres side's pool (the process's one for its DSN) and tenant."""
    from specwire.runtime.core.fragment_data import FactsData
    from specwire.runtime.facts.providers.connect import DEFAULT_TENANT, shared_postgres_pool

    dsn = getattr(args, f"{side}_dsn")
    pool = shared_postgres_pool(
        FactsData(backend="postgres", dsn=dsn if dsn is not None else args.dsn)
    )
    return pool, args.tenant if args.tenant is not None else DEFAULT_TENANT


def _state_side(
    args: argparse.Namespace, backend: str, selection: Selection, side: str
) -> FileSide | DatabaseSide | None:
    """Where a side keeps the spec's state documents; None for a memory service (facts
    only)."""
    spec = selection.layout.spec_name
    if backend == "file":
        return FileSide(selection.layout.root, spec)
    if backend != "postgres":
        return None
    from specwire.runtime.pg.volume import PostgresVolume

    pool, tenant = _database(args, side)
    return DatabaseSide(PostgresVolume(pool, selection.layout.root, tenant=tenant, spec=spec), spec)


def _migrate_state(
    args: argparse.Namespace, source_at: Selection, target_at: Selection
) -> StateCopy | None:
    """Copy the state documents too when both sides can hold them (file and postgres)."""
    source = _state_side(args, args.source, source_at, "from")
    target = _state_side(args, args.target, target_at, "to")
    if source is None or target is None:
        return None
    todo, present = pending(source, target)
    if todo:
        confirm(
            f"migrate {len(todo)} state document(s) (continuity, wiki, trash) from "
            f"{args.source} to {args.target}; {len(present)} are there already",
            assume_yes=args.yes,
        )
    with Progress("copying state documents") as copying, copying.ticking():
        return copy_state(source, target, todo, len(set(present) & set(source.texts())))


def _tier_sides(
    args: argparse.Namespace, backend: str, selection: Selection, side: str
) -> tuple[FileUsage | DatabaseUsage, FileSessions | DatabaseSessions] | None:
    """Where a side keeps the spec's usage ledger and session logs; None for a memory
    service."""
    spec = selection.layout.spec_name
    if backend == "file":
        return FileUsage(selection.layout.root, spec), FileSessions(selection.layout.root, spec)
    if backend != "postgres":
        return None
    from specwire.runtime.sessions.postgres import PostgresSessionLogs

    pool, tenant = _database(args, side)
    logs = PostgresSessionLogs(pool, tenant=tenant, spec=spec)
    return DatabaseUsage(pool, tenant, spec), DatabaseSessions(logs)


TierPlan = tuple[
    FileUsage | DatabaseUsage,
    FileSessions | DatabaseSessions,
    FileSessions | DatabaseSessions,
    Totals,
    SessionPlan,
]


def _plan_tiers(
    args: argparse.Namespace, source_at: Selection, target_at: Selection
) -> TierPlan | None:
    """The usage ledger and the session logs to move, read and verified, when both sides can
    hold them (file and postgres)."""
    source = _tier_sides(args, args.source, source_at, "from")
    target = _tier_sides(args, args.target, target_at, "to")
    if source is None or target is None:
        return None
    with Progress("verifying the session logs") as reading, reading.ticking():
        totals = usage_pending(source[0])
        return target[0], source[1], target[1], totals, sessions_pending(source[1], target[1])


def _migrate_tiers(
    args: argparse.Namespace, planned: TierPlan | None
) -> tuple[UsageCopy, SessionCopy] | None:
    if planned is None:
        return None
    usage, from_sessions, to_sessions, totals, plan = planned
    if plan.todo:
        confirm(
            f"migrate {len(plan.todo)} session log(s) ({plan.events} event(s), sealed again "
            f"with the target's key) from {args.source} to {args.target}; "
            f"{len(plan.present)} are there already",
            assume_yes=args.yes,
        )
    with Progress("copying the usage ledger and session logs") as copying, copying.ticking():
        return copy_usage(totals, usage), copy_sessions(from_sessions, to_sessions, plan)


def _usage_said(usage: UsageCopy) -> str:
    turns = usage.totals[0].turns
    return {
        "none": "none to copy",
        "copied": f"copied ({turns} turn(s))",
        "present": f"there already ({turns} turn(s))",
        "differs": "not copied",
    }[usage.outcome]


def _check(args: argparse.Namespace) -> None:
    if getattr(args, "backend", "file") != "file":
        raise SelectionError("migrate takes --from and --to, not --backend")
    if not 1 <= args.batch <= MAX_BATCH:
        raise SelectionError(f"--batch {args.batch}: between 1 and {MAX_BATCH}")
    for side, backend in (("from", args.source), ("to", args.target)):
        if backend == "http" and not (getattr(args, f"{side}_url") or args.url):
            raise SelectionError(
                f"--{side} http needs --{side}-url (the memory service's URL or $VAR)"
            )
    if args.source == args.target == "file" and args.to_root is None:
        raise SelectionError("--from file --to file: name the target with --to-root DIR")


def _only_spec(args: argparse.Namespace) -> str:
    if args.source == "file":
        return select(args.root, None, args.tenant, None).layout.spec_name
    if args.source == "postgres":  # the database says which spec the tenant keeps
        return database_spec(args.from_dsn or args.dsn, args.tenant, None)
    return remote_spec(args.root, None, args.tenant)


def _source_selection(args: argparse.Namespace, spec: str) -> Selection:
    if args.source == "file":
        return select(args.root, spec, args.tenant, None)
    return select_remote(args.root, spec, args.tenant, None)


def _open(
    args: argparse.Namespace,
    backend: str,
    selection: Selection,
    side: str,
    *,
    create: bool,
    now: Clock,
) -> AbstractContextManager[OwnerFacts]:
    if backend == "http":
        return open_transfer(
            getattr(args, f"{side}_url") or args.url,
            getattr(args, f"{side}_token"),
            selection.layout.spec_name,
            tenant=args.tenant,
        )
    dsn = getattr(args, f"{side}_dsn")
    return open_backend(
        backend,
        selection,
        dsn=dsn if dsn is not None else args.dsn,
        url=None,
        token=None,
        tenant=args.tenant,
        create=create,
        now=now,
    )


def _same_store(source: OwnerFacts, target: OwnerFacts) -> bool:
    if source.name != target.name:
        return False
    if source.name == "file":
        return Path(source.where).resolve() == Path(target.where).resolve()
    if source.name == "http":
        return source.where == target.where
    # One DSN, one shared pool (``providers.connect``): the same database, spec and tenant.
    return getattr(source.backend, "pool", None) is getattr(target.backend, "pool", object())


def _snapshot(facts: OwnerFacts, what: str) -> Snapshot:
    return Snapshot(facts.exporter(what).export_facts(), facts.quarantine(what).quarantined())


def _batches(items: Sequence[_T], size: int) -> Iterator[Sequence[_T]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def _described(found: Digest) -> str:
    return (
        f"{found.facts} fact(s) (sha256 {found.facts_sha256[:16]}…) and {found.held} held "
        f"write(s) (sha256 {found.held_sha256[:16]}…)"
    )
