"""The usage ledger and the session logs in ``codegen memory migrate``: the two tiers that are
not documents (``state_migration``), moved between the file layout and PostgreSQL.

**Usage.** A tenant's ledger (``usage/<spec>.json`` on files, its ``usage_ledgers`` row in the
database: the turns' totals and the dream's) is copied whole into a target that counts nothing
yet; a target holding the same totals is left as it is (a second run copies nothing); one
counting something else is left alone and reported (never added to: a budget must not count a
turn twice).

**Session logs.** Every session of the spec (on files: each ``sessions/*.jsonl`` except those
whose ``session_start`` names another spec) is read and verified whole first
(``runtime.sessions.transfer``): a log that is not (a line whose seal fails, a gap) is refused
with one line naming it and nothing of it is written; the others go on. Each event keeps its
``seq`` and ``at`` and is sealed again with the target's key. A session the target holds with
the same events is left as it is; one it holds with other events is refused, never merged.
Verification reads every moved session back from the target and compares the sha256 of both
sides' sorted ``(session, events)``. One log is in memory at a time: the plan keeps each
session's digest, and a log is read again (it must still match) when it is copied.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from specwire.runtime.core.errors import StoreError
from specwire.runtime.core.fragment import storage_name
from specwire.runtime.fs.fenced import write_atomic
from specwire.runtime.fs.locking import FileLock
from specwire.runtime.sessions.log import read_events, session_log_path
from specwire.runtime.sessions.transfer import (
    Body,
    TamperedLog,
    database_chain,
    file_chain,
    file_session_ids,
    insert_database_log,
    is_log_name,
    write_file_log,
)
from specwire.runtime.usage.database import Adopted
from specwire.runtime.usage.files import ledger_bytes, ledger_path, read_ledger
from specwire.runtime.usage.totals import DreamUsage, TenantUsage

if TYPE_CHECKING:
    from psycopg_pool import ConnectionPool

    from specwire.runtime.sessions.postgres import PostgresSessionLogs

Totals = tuple[TenantUsage, DreamUsage]
NOTHING: Totals = (TenantUsage(), DreamUsage())


# -- usage ------------------------------------------------------------------------------------


class FileUsage:
    """A spec's usage ledger under a store root (``.specwire`` or a tenant's root)."""

    def __init__(self, root: Path, spec: str) -> None:
        self.root, self.spec = root, spec
        self.path = ledger_path(root, spec)

    def where(self) -> str:
        return str(self.path)

    def read(self) -> Totals:
        return read_ledger(self.path)

    def adopt(self, totals: Totals) -> Adopted:
        """Write ``totals`` when the ledger counts nothing (under the hosts' ledger lock)."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        lock = self.path.parent / f"{storage_name(self.spec)}.lock"
        with FileLock(lock, wait_s=10.0, what="the usage ledger"):
            held = read_ledger(self.path)
            if held == totals:
                return "present"
            if held != NOTHING:
                return "differs"
            write_atomic(self.path, ledger_bytes(*totals).decode("utf-8"), root=self.root)
        return "copied"


class DatabaseUsage:
    """A tenant's spec's row of ``usage_ledgers``."""

    def __init__(self, pool: ConnectionPool[Any], tenant: str, spec: str) -> None:
        self.pool, self.tenant, self.spec = pool, tenant, spec

    def where(self) -> str:
        return f"usage_ledgers (tenant {self.tenant}, spec {self.spec})"

    def read(self) -> Totals:
        from specwire.runtime.pg.pool import translated
        from specwire.runtime.usage.database import read_row

        with translated("read the usage ledger"), self.pool.connection() as conn:
            return read_row(conn, self.tenant, self.spec)

    def adopt(self, totals: Totals) -> Adopted:
        from specwire.runtime.pg.migrations import migrate_once
        from specwire.runtime.pg.pool import translated
        from specwire.runtime.usage.database import COMPONENT, USAGE_MIGRATIONS, adopt_row

        migrate_once(self.pool, COMPONENT, USAGE_MIGRATIONS)
        with translated("copy the usage ledger"), self.pool.connection() as conn:
            return adopt_row(conn, self.tenant, self.spec, *totals)


UsageSide = FileUsage | DatabaseUsage


@dataclass(frozen=True)
class UsageCopy:
    outcome: Literal["copied", "present", "differs", "none"]
    totals: Totals
    target: str

    @property
    def verified(self) -> bool:
        return self.outcome != "differs"

    def as_json(self) -> dict[str, object]:
        turns, dream = self.totals
        return {
            "outcome": self.outcome,
            "turns": turns.turns,
            "inputTokens": turns.input,
            "outputTokens": turns.output,
            "dreamRuns": dream.runs,
        }


def usage_pending(source: UsageSide) -> Totals:
    """The source's totals (zeros: no ledger to move)."""
    return source.read()


def copy_usage(totals: Totals, target: UsageSide) -> UsageCopy:
    if totals == NOTHING:
        return UsageCopy("none", totals, target.where())
    outcome = target.adopt(totals)
    if outcome != "differs" and target.read() != totals:
        outcome = "differs"
    return UsageCopy(outcome, totals, target.where())


# -- session logs -----------------------------------------------------------------------------


class FileSessions:
    """The session logs of a store root's ``sessions/`` that belong to ``spec``."""

    def __init__(self, root: Path, spec: str) -> None:
        self.root, self.spec = root, spec
        self.sessions_dir = root / "sessions"

    def ids(self) -> list[str]:
        return [s for s in file_session_ids(self.sessions_dir) if not self._other_spec(s)]

    def _other_spec(self, session_id: str) -> bool:
        """Whether the log's (host-sealed) ``session_start`` names another spec: the folder is
        shared by every spec run under this root."""
        for event in read_events(session_log_path(self.sessions_dir, session_id)):
            named = event.payload.get("spec") if event.type == "session_start" else None
            return isinstance(named, str) and named != self.spec
        return False

    def chain(self, session_id: str) -> list[Body]:
        if not is_log_name(session_id):
            raise StoreError(f"session {session_id!r} cannot name a log file under {self.root}")
        return file_chain(self.sessions_dir, session_id)

    def write(self, session_id: str, bodies: list[Body]) -> bool:
        if session_log_path(self.sessions_dir, session_id).exists():
            return False
        write_file_log(self.root, self.sessions_dir, session_id, bodies)
        return True


class DatabaseSessions:
    """A tenant's spec's rows of ``session_log_events``."""

    def __init__(self, logs: PostgresSessionLogs) -> None:
        self.logs = logs

    def ids(self) -> list[str]:
        return self.logs.sessions()

    def chain(self, session_id: str) -> list[Body]:
        return database_chain(self.logs, session_id)

    def write(self, session_id: str, bodies: list[Body]) -> bool:
        return insert_database_log(self.logs, session_id, bodies)


SessionSide = FileSessions | DatabaseSessions


@dataclass(frozen=True)
class SessionPlan:
    """What the source holds, by session: its events' count and digest (``chain_digest``),
    never the events themselves (a tenant's logs need not fit in memory; each is read again,
    and must still be what was verified, when it is copied)."""

    todo: dict[str, tuple[int, str]]
    # The sessions the target holds with the same events.
    present: dict[str, tuple[int, str]]
    # One line per session refused (a tampered source, another log in the target).
    refused: tuple[str, ...]

    @property
    def events(self) -> int:
        return sum(count for count, _ in self.todo.values())


@dataclass(frozen=True)
class SessionCopy:
    copied: int
    events: int
    present: int
    refused: tuple[str, ...]
    source_sha256: str
    target_sha256: str

    @property
    def verified(self) -> bool:
        return not self.refused and self.source_sha256 == self.target_sha256


def sessions_pending(source: SessionSide, target: SessionSide) -> SessionPlan:
    """Every session of the source verified whole, and what the target holds of each."""
    todo: dict[str, tuple[int, str]] = {}
    present: dict[str, tuple[int, str]] = {}
    refused: list[str] = []
    for session_id in source.ids():
        try:
            bodies = source.chain(session_id)
        except TamperedLog as exc:
            refused.append(f"refused {exc}: nothing of it was copied")
            continue
        if not bodies:
            continue
        planned = (len(bodies), chain_digest(bodies))
        try:
            there = target.chain(session_id)
        except (TamperedLog, StoreError) as exc:
            refused.append(f"refused session log {session_id}: the target's is not whole ({exc})")
            continue
        if not there:
            todo[session_id] = planned
        elif chain_digest(there) == planned[1]:
            present[session_id] = planned
        else:
            refused.append(
                f"refused session log {session_id}: the target holds it with other events "
                f"({len(there)} there, {len(bodies)} here); not merged"
            )
    return SessionPlan(todo, present, tuple(refused))


def copy_sessions(source: SessionSide, target: SessionSide, plan: SessionPlan) -> SessionCopy:
    """Copy each planned session, read again from the source (it must still be what was
    verified) and read back from the target."""
    refused = list(plan.refused)
    copied = events = 0
    moved = {session_id: digest for session_id, (_, digest) in plan.present.items()}
    after = dict(moved)
    for session_id, (count, digest) in sorted(plan.todo.items()):
        try:
            bodies = source.chain(session_id)
            if chain_digest(bodies) != digest:
                refused.append(
                    f"refused session log {session_id}: it changed since it was verified "
                    "(stop the agent and run migrate again); nothing of it was copied"
                )
                continue
            if not target.write(session_id, bodies):
                refused.append(
                    f"refused session log {session_id}: the target began holding it "
                    "meanwhile; not merged"
                )
                continue
            del bodies
            copied += 1
            events += count
            moved[session_id] = digest
            after[session_id] = chain_digest(target.chain(session_id))
        except StoreError as exc:  # TamperedLog included
            refused.append(f"refused session log {session_id}: {exc}")
    return SessionCopy(
        copied,
        events,
        len(plan.present),
        tuple(refused),
        sessions_digest(moved),
        sessions_digest(after),
    )


def chain_digest(bodies: list[Body]) -> str:
    """The sha256 of a log's sealed bodies in order (canonical JSON): what verification
    compares, whatever key sealed them."""
    digest = hashlib.sha256()
    for body in bodies:
        digest.update(
            json.dumps(body, ensure_ascii=False, sort_keys=True, separators=(",", ":")).encode(
                "utf-8"
            )
            + b"\0"
        )
    return digest.hexdigest()


def sessions_digest(chains: dict[str, str]) -> str:
    """The sha256 of the sorted ``(session, chain_digest)`` pairs."""
    digest = hashlib.sha256()
    for session_id in sorted(chains):
        digest.update(session_id.encode("utf-8") + b"\0" + chains[session_id].encode() + b"\n")
    return digest.hexdigest()
