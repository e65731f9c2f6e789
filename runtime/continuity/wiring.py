"""``build_continuity``: the continuity tier's store, tools and loop seam from the fragment.

The seam's ``load_plan`` / ``on_plan_dirty`` return the whole continuity tail
(``<current_plan>…</current_plan>`` plus ``<requirements_ledger>…</requirements_ledger>`` when the
ledger is on), ready to append after the cache marker. Seam callbacks that write never raise
into the loop for a store refusal: they log it and carry on.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from specwire.runtime.continuity.focus import DEFAULT_FOCUS_MAX_CHARS
from specwire.runtime.continuity.store import ContinuityStore
from specwire.runtime.continuity.tools import continuity_tools
from specwire.runtime.core.clock import Clock
from specwire.runtime.core.errors import MemoryServiceError, StoreError
from specwire.runtime.core.fragment_data import ContinuityData
from specwire.runtime.core.lazy_dataclass import lazy_methods_dataclass
from specwire.runtime.core.paths import StoreLayout
from specwire.runtime.core.scopes import Audience, ScopeError, ScopeKey
from specwire.runtime.core.seams import ContinuitySeam, HandoffInput, LedgerEntry
from specwire.runtime.core.tool_types import Tool
from specwire.runtime.core.volume import DocumentVolume
from specwire.runtime.sessions.store import LogSource


@lazy_methods_dataclass(frozen=True)
class ContinuityWiring:
    """The continuity tier as wired: store, tools and seam."""

    store: ContinuityStore
    tools: list[Tool]
    seam: ContinuitySeam


def build_continuity(
    continuity: ContinuityData,
    layout: StoreLayout,
    *,
    sessions_dir: LogSource,
    session_scope: str | None,
    now: Clock,
    log: Callable[[str], None],
    volume: DocumentVolume | None = None,
    audience: Audience | None = None,
) -> ContinuityWiring:
    """``volume``: where the documents live (None: files under the layout's root; the
    composition root passes a ``PostgresVolume`` when the fragment says ``memory.state``).
    ``audience``: who the turn is with; scope ``audience`` keeps the continuity of that person
    (their ``user``, in a private conversation), else of that conversation."""
    if continuity.scope == "session":
        if not session_scope:
            raise MemoryServiceError(
                'continuity scope "session" needs deps.session_scope (the conversation\'s '
                "session id); the host passes it per turn"
            )
        scope_dir = layout.session_state_dir(session_scope)
    elif continuity.scope == "audience":
        scope_dir = layout.audience_state_dir(_audience_key(audience))
    else:
        scope_dir = layout.state_dir
    store = ContinuityStore(
        layout,
        scope_dir=scope_dir,
        sessions_dir=sessions_dir,
        proof_mode=continuity.proof,
        focus_max_chars=continuity.focus_max_chars or DEFAULT_FOCUS_MAX_CHARS,
        now=now,
        log=log,
        volume=volume,
    )
    tools = continuity_tools(store, continuity.proof, continuity.plan)
    seam = _seam(store, continuity, log)
    parts = "focus · plans · goals" if continuity.plan else "focus"
    where = store.scope_dir if store.volume.on_files else store.volume.where
    log(f"[memory] continuity on — {where} ({parts})\n")
    return ContinuityWiring(store, tools, seam)


def _audience_key(audience: Audience | None) -> ScopeKey:
    """The person a turn's continuity follows: the private conversation's ``user``, else the
    conversation. Fails closed: with neither there is nobody to keep it for (never the
    agent-wide folder, which every user would share)."""
    try:
        if audience is None:
            raise ScopeError("no audience")
        return audience.default_key("user")
    except ScopeError:
        raise MemoryServiceError(
            'continuity scope "audience" needs the turn\'s audience (a user or a conversation; '
            "the managed host passes it per request)"
        ) from None


def _seam(
    store: ContinuityStore, continuity: ContinuityData, log: Callable[[str], None]
) -> ContinuitySeam:
    def tail() -> str | None:
        return store.render_continuity_tail(
            include_plans=continuity.plan, include_ledger=continuity.ledger
        )

    def record(entries: Sequence[LedgerEntry]) -> None:
        try:
            store.record_requirements(entries)
        except StoreError as exc:
            log(f"[memory] requirements not recorded: {exc}\n")

    def handoff(done: HandoffInput) -> None:
        try:
            store.write_handoff(done)
        except StoreError as exc:
            log(f"[memory] handoff not written: {exc}\n")

    return ContinuitySeam(
        load_plan=tail,
        on_plan_dirty=tail,
        ledger=continuity.ledger,
        record_requirements=record if continuity.ledger else None,
        on_handoff=handoff if continuity.handoff else None,
        load_handoff=store.read_handoff if continuity.handoff else None,
    )
