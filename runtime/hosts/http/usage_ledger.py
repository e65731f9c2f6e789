"""Each tenant's token usage, persisted under the tenant's root, and its budget check.

``<tenant root>/usage/<spec>.json`` holds the totals (``input``, ``output``, ``cached``,
``turns``, and ``estimated``: what admission estimated those turns' messages at), updated after
every turn under a file lock (several processes may serve one tenant) and replaced atomically,
so a crash never leaves half a ledger. A ledger that cannot be read fails closed: the tenant's
turns are refused until its owner fixes or removes the file.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, Protocol, runtime_checkable

from specwire.runtime.core.errors import StoreError
from specwire.runtime.core.fragment import storage_name
from specwire.runtime.core.tenancy import assert_inside
from specwire.runtime.fs.atomic import replace_atomically
from specwire.runtime.fs.locking import FileLock
from specwire.runtime.hosts.types import TenantConfig
from specwire.runtime.models import Usage

_FIELDS = ("input", "output", "cached", "turns")
# Added later: a ledger written before it counts as having estimated nothing.
_OPTIONAL_FIELDS = ("estimated",)


@dataclass(frozen=True)
class TenantUsage:
    input: int = 0
    output: int = 0
    cached: int = 0
    turns: int = 0
    estimated: int = 0

    def plus(self, usage: Usage, estimated: int = 0) -> TenantUsage:
        return TenantUsage(
            self.input + usage.input,
            self.output + usage.output,
            self.cached + usage.cached,
            self.turns + 1,
            self.estimated + estimated,
        )

    def input_overhead(self) -> int | None:
        """The input tokens a recorded turn spent, on average, beyond its message's estimate
        (instructions, tools, recalled memory, history, tool rounds); None before any turn."""
        if not self.turns:
            return None
        return max(0, -(-(self.input - self.estimated) // self.turns))


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
        folder = tenant_root / "usage"
        self.path = assert_inside(folder / f"{storage_name(spec_name)}.json", tenant_root)
        self._lock_path = folder / f"{storage_name(spec_name)}.lock"
        self._thread_lock = threading.Lock()

    def read(self) -> TenantUsage:
        try:
            raw = self.path.read_bytes()
        except FileNotFoundError:
            return TenantUsage()
        except OSError as exc:
            raise StoreError(f"the usage ledger {self.path} cannot be read: {exc}") from None
        try:
            data = json.loads(raw.decode("utf-8"))
            values = [data[name] for name in _FIELDS]
            values += [data.get(name, 0) for name in _OPTIONAL_FIELDS]
        except (ValueError, KeyError, TypeError):
            data, values = None, []
        if not values or not all(
            isinstance(value, int) and not isinstance(value, bool) and value >= 0
            for value in values
        ):
            raise StoreError(
                f"the usage ledger {self.path} is damaged; the tenant's budget cannot be "
                "enforced until it is fixed or removed"
            )
        return TenantUsage(*values)

    def add(self, usage: Usage, *, estimated: int = 0) -> TenantUsage:
        """Record one turn's ``usage``; ``estimated`` is what admission reserved for its
        message (``estimate_input_tokens``)."""
        with self._thread_lock:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with FileLock(self._lock_path, wait_s=10.0, what="the usage ledger"):
                total = self.read().plus(usage, estimated)
                payload = {name: getattr(total, name) for name in _FIELDS + _OPTIONAL_FIELDS}
                replace_atomically(self.path, (json.dumps(payload) + "\n").encode(), mode=0o600)
        return total
