"""An owner-run dream's model spend, in the usage ledger as the scheduled dream's is.

A managed host records each tenant's scheduled dream in the tenant's usage ledger, as the
dream's own kind (runs, calls, tokens, cost; never counted against the turn budget:
``runtime.hosts.http.usage_ledger``). A dream the owner runs by hand spends the same model
tokens for the same tenant: ``codegen dream run --bundle … [--tenant ID]``
(``runtime.hosts.dream_command``) and ``python agent.py --dream`` (``runtime.hosts.dream_run``)
wrap their model session with ``recorded`` so its phases land in the same ledger, same kind:
the tenant's (``--tenant``), or the agent's own without one (``<state root>/usage/<spec>.json``;
the default tenant's row in PostgreSQL). With ``memory.state: postgres`` the ledger is the
database's ``usage_ledgers`` row, so nothing is written under the folder the command runs in.

A phase that made no call spent nothing and is not recorded; a ledger that cannot take it is
said on the log (the run already happened: its record keeps the spend).
"""

from __future__ import annotations

from collections.abc import Callable

from specwire.runtime.core.errors import StoreError
from specwire.runtime.core.fragment_data import FragmentData
from specwire.runtime.core.paths import StoreLayout
from specwire.runtime.core.tenancy import Tenant
from specwire.runtime.dream.model_phase import ModelSession
from specwire.runtime.dream.outcome import ModelPhase
from specwire.runtime.hosts.dream_session import dream_usage, metered
from specwire.runtime.hosts.http.usage_ledger import Ledger
from specwire.runtime.wiring import state_in_database


def dream_ledger(fragment: FragmentData, layout: StoreLayout, tenant: Tenant | None) -> Ledger:
    """The usage ledger of ``tenant``'s spec (``None``: the agent's own, under ``layout``'s
    root): its row in the database with ``memory.state: postgres``, else its file."""
    if fragment.memory is not None and state_in_database(fragment):
        from specwire.runtime.facts.providers.connect import DEFAULT_TENANT, shared_postgres_pool
        from specwire.runtime.hosts.http.usage_postgres import PostgresUsageLedger

        return PostgresUsageLedger(
            shared_postgres_pool(fragment.memory),
            tenant=tenant.id if tenant is not None else DEFAULT_TENANT,
            spec=layout.spec_name,
        )
    from specwire.runtime.hosts.http.usage_ledger import UsageLedger

    return UsageLedger(layout.root, layout.spec_name)


def recorded(
    session: ModelSession,
    fragment: FragmentData,
    layout: StoreLayout,
    tenant: Tenant | None,
    log: Callable[[str], None],
) -> ModelSession:
    """``session``, each run's model phase added to the usage ledger (``dream_ledger``) as the
    dream's kind when it ends (a phase that failed midway too: its calls were billed)."""

    def record(phase: ModelPhase) -> None:
        usage = dream_usage(phase)
        if usage is None:
            return
        try:
            dream_ledger(fragment, layout, tenant).add_dream(usage)
        except (StoreError, OSError) as exc:
            who = f"tenant {tenant.id}" if tenant is not None else layout.spec_name
            log(f"[dream] {who}: the model phase's usage is not in the usage ledger: {exc}\n")

    return metered(session, record)
