"""Each tenant's token usage, persisted under the tenant's root, and its budget check.

``<tenant root>/usage/<spec>.json`` holds the totals (``input``, ``output``, ``cached``,
``turns``, and ``estimated``: what admission estimated those turns' messages at), updated after
every turn under a file lock (several processes may serve one tenant) and replaced atomically,
so a crash never leaves half a ledger. A ledger that cannot be read fails closed: the tenant's
turns are refused until its owner fixes or removes the file.

The scheduled dream's model phase is recorded in the same ledger as a kind of its own
(``"dream"``: runs, calls, tokens and cost; ``add_dream``), so the tenant sees what its memory's
upkeep spent. It is not counted against the turn budget: a background job the tenant did not
ask for never refuses its next turn, its spend is bounded per run by the spec's
``memory.dream.budget``, and the turns' totals stay what admission learns a turn's overhead
from. The format is ``runtime.usage``'s.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Literal, Protocol, runtime_checkable

from specwire.runtime.core.fragment import storage_name
from specwire.runtime.fs.atomic import replace_atomically
from specwire.runtime.fs.locking import FileLock
from specwire.runtime.hosts.types import TenantConfig
from specwire.runtime.models import Usage
from specwire.runtime.usage.files import ledger_bytes, ledger_path, read_ledger
from specwire.runtime.usage.totals import DreamUsage, TenantUsage

__all__ = [
    "Decide",
    "DreamUsage",
    "Ledger",
    "SharedLedger",
    "TenantUsage",
    "UsageLedger",
    "Verdict",
    "budget_problem",
    "estimate_input_tokens",
]


def estimate_input_tokens(text: str) -> int:
    """The tokens ``text`` will cost as model input, estimated before the turn runs: a UTF-8
    byte count over 3, so never under the ~4 characters a token English tokenizes at and close
    to the one or more tokens a CJK character costs (3 bytes). Usage is recorded as the model
    reports it; the difference is learned as the tenant's overhead (``input_overhead``)."""
    return (len(text.encode("utf-8", "surrogatepass")) + 2) // 3


def budget_problem(used: TenantUsage, tenant: TenantConfig) -> str | None:
    """Why the tenant may not start another turn, or None."""
    if tenant.max_input_tokens is not None and used.input >= tenant.max_input_tokens:
        return (
            f"tenant {tenant.id!r} has used its input-token budget "
            f"({used.input} of {tenant.max_input_tokens})"
        )
    if tenant.max_output_tokens is not None and used.output >= tenant.max_output_tokens:
        return (
            f"tenant {tenant.id!r} has used its output-token budget "
            f"({used.output} of {tenant.max_output_tokens})"
        )
    return None


class Ledger(Protocol):
    """A tenant's usage of a spec: this file ledger, or ``PostgresUsageLedger`` with
    ``memory.state: postgres`` (``runtime.hosts.http.usage_postgres``)."""

    def read(self) -> TenantUsage: ...

    def add(self, usage: Usage, *, estimated: int = 0) -> TenantUsage: ...

    def read_dream(self) -> DreamUsage: ...

    def add_dream(self, dream: DreamUsage) -> DreamUsage: ...


Verdict = Literal["admit", "wait", "refuse"]
# (recorded totals, turns in flight, input reserved by them) -> what to do with the next turn,
# the input to reserve for it, and a refusal's reason.
Decide = Callable[[TenantUsage, int, int], tuple[Verdict, int, str]]


@runtime_checkable
class SharedLedger(Ledger, Protocol):
    """A ledger every worker shares (``PostgresUsageLedger``): admission is decided in it,
    against the turns in flight everywhere; ``admit`` returns the verdict, the input reserved
    and the reservation's ticket (or a refusal's reason)."""

    def admit(self, decide: Decide) -> tuple[Verdict, int, str]: ...

    def release(self, ticket: str) -> None: ...

    def subscribe(self, wake: Callable[[], None]) -> Callable[[], None]:
        """Call ``wake()`` (from any thread) when the ledger changes on any worker, until the
        returned function is called: a turn waiting for room wakes then."""
        ...

    def add(
        self, usage: Usage, *, estimated: int = 0, ticket: str | None = None
    ) -> TenantUsage: ...


class UsageLedger:
    def __init__(self, tenant_root: Path, spec_name: str) -> None:
        self.path = ledger_path(tenant_root, spec_name)
        self._lock_path = self.path.parent / f"{storage_name(spec_name)}.lock"
        self._thread_lock = threading.Lock()

    def read(self) -> TenantUsage:
        return read_ledger(self.path)[0]

    def read_dream(self) -> DreamUsage:
        return read_ledger(self.path)[1]

    def add(self, usage: Usage, *, estimated: int = 0) -> TenantUsage:
        """Record one turn's ``usage``; ``estimated`` is what admission reserved for its
        message (``estimate_input_tokens``). A negative count (a provider's odd report) is
        recorded as 0, as PostgreSQL's ledger records it: a ledger holding one reads as damaged
        and every later turn of the tenant would fail."""
        counted = Usage(max(0, usage.input), max(0, usage.output), max(0, usage.cached))
        turns, _ = self._change(
            lambda turns, dream: (turns.plus(counted, max(0, estimated)), dream)
        )
        return turns

    def add_dream(self, dream: DreamUsage) -> DreamUsage:
        """Record one dream's model phase (its own kind: the turns' totals do not change); a
        negative count is recorded as 0 (``add``)."""
        counted = DreamUsage(*(max(0, value) for value in dream.values()))
        _, total = self._change(lambda turns, recorded: (turns, recorded.plus(counted)))
        return total

    def _change(
        self, change: Callable[[TenantUsage, DreamUsage], tuple[TenantUsage, DreamUsage]]
    ) -> tuple[TenantUsage, DreamUsage]:
        with self._thread_lock:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with FileLock(self._lock_path, wait_s=10.0, what="the usage ledger"):
                turns, dream = change(*read_ledger(self.path))
                replace_atomically(self.path, ledger_bytes(turns, dream), mode=0o600)
        return turns, dream
