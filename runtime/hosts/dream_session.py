"""The bounded model session of ``mode: full``: one session through the agent loop, offered
only the memory tools, that stops at the budget.

``BudgetedModel`` prices every call from the usage the model reports and, once the spend
reaches the budget, answers with a stop note instead of calling the model again, so the turn
(and the session: one message, one turn) ends. A call already in flight when the budget is
reached completes, so the spend can pass the budget by at most one call. A model that reports
no usage cannot be metered, nor can a call a fallback model answered (the price is the
primary's): such a call is taken to spend the whole budget.

``memory_session`` builds the ``ModelSession`` a host passes to ``run_dream``: the catalog holds
only what ``wire_memory`` registers (facts, continuity, wiki tools), never file tools or a shell.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from specwire.runtime.core.clock import Clock, utc_now
from specwire.runtime.core.fragment import MemoryWiringFragment
from specwire.runtime.core.fragment_data import FragmentData
from specwire.runtime.core.ids import new_session_id
from specwire.runtime.core.paths import StoreLayout
from specwire.runtime.core.seams import LoopOptions
from specwire.runtime.core.tenancy import Tenant
from specwire.runtime.core.tool_types import ToolCatalog
from specwire.runtime.dream.model_phase import ModelPrice, ModelSession
from specwire.runtime.dream.outcome import ModelPhase
from specwire.runtime.dream.settings import DreamSettings
from specwire.runtime.loop.chat import run_chat_loop
from specwire.runtime.models.types import Model, ModelRequest, ModelResponse, Usage
from specwire.runtime.sessions.log import SessionLog
from specwire.runtime.sessions.store import SessionRecorder
from specwire.runtime.wiring import (
    MemoryDeps,
    parse_fragment,
    session_logs_for,
    state_in_database,
    wire_memory,
)

STOP_NOTE = "[stopped: the dream's budget is spent]"
MAX_TOOL_ROUNDS = 24
DREAM_INSTRUCTIONS = (
    "You are consolidating this agent's memory while nobody is waiting for an answer. Use only "
    "the memory tools: merge facts that say the same thing, supersede outdated ones, keep the "
    "wiki's articles consistent with what the facts say, and note knowledge gaps. Never invent "
    "facts; when unsure, change nothing. Stop when there is nothing left worth doing."
)
DEFAULT_TASK = "Consolidate the memory now."


def call_cost(usage: Usage, price: ModelPrice) -> float:
    """USD of one call: fresh prompt tokens at the input price, cached ones at the cached-input
    price, answer tokens at the output price (``ModelPrice.cost_usd``)."""
    return price.cost_usd(usage)


class BudgetedModel:
    def __init__(self, model: Model, price: ModelPrice, budget_usd: float) -> None:
        self._model = model
        self._price = price
        # The id ``price`` was looked up for; a fallback chain answers under another's.
        self._priced_id = model.model_id
        self.budget_usd = budget_usd
        self.spent_usd = 0.0
        self.calls = 0
        self.unmetered_calls = 0
        self.usage = Usage()
        self.stopped = False

    @property
    def model_id(self) -> str:
        return self._model.model_id

    def complete(self, request: ModelRequest) -> ModelResponse:
        if self.spent_usd >= self.budget_usd:
            self.stopped = True
            return ModelResponse(text=STOP_NOTE)
        response = self._model.complete(request)
        self.calls += 1
        if response.usage is not None:
            self.usage = self.usage + response.usage
        if response.usage is None or self._model.model_id != self._priced_id:
            # Unmetered, or answered by a model the price is not for: its cost is unknown.
            self.unmetered_calls += 1
            self.spent_usd = max(self.spent_usd, self.budget_usd)
        else:
            self.spent_usd += call_cost(response.usage, self._price)
        return response


def run_bounded_session(
    model: Model,
    price: ModelPrice,
    settings: DreamSettings,
    *,
    wired_catalog: ToolCatalog,
    options: LoopOptions,
    layout: StoreLayout,
    now: Clock = utc_now,
    log: Callable[[str], None],
    session_log: SessionRecorder | None = None,
) -> ModelPhase:
    """``session_log``: where the session is logged (default: a new log file in ``layout``'s
    sessions folder)."""
    assert settings.budget_usd is not None
    budgeted = BudgetedModel(model, price, settings.budget_usd)
    if session_log is None:
        session_log = SessionLog(layout.sessions_dir, new_session_id(), now=now)
    result = run_chat_loop(
        model=budgeted,
        instructions=DREAM_INSTRUCTIONS,
        catalog=wired_catalog,
        session_log=session_log,
        inputs=[settings.instructions or DEFAULT_TASK],
        output=lambda _text: None,
        single_turn=True,
        max_tool_rounds=MAX_TOOL_ROUNDS,
        spec_name=layout.spec_name,
        target="dream",
        log=log,
        memory=options.get("memory"),
        continuity=options.get("continuity"),
    )
    spent = budgeted.stopped or budgeted.spent_usd >= budgeted.budget_usd
    reason = "stopped at the budget" if spent else None
    usage = budgeted.usage
    log(
        f"[dream] model phase: {budgeted.calls} call(s), {usage.input} input ({usage.cached} "
        f"cached) and {usage.output} output tokens, ${budgeted.spent_usd:.6f} of "
        f"${budgeted.budget_usd:g} (session {result.session_id})\n"
    )
    return ModelPhase(
        ran=True,
        reason=reason,
        spent_usd=round(budgeted.spent_usd, 6),
        model=model.model_id,
        budget_usd=budgeted.budget_usd,
        calls=budgeted.calls,
        input_tokens=usage.input,
        output_tokens=usage.output,
        cached_tokens=usage.cached,
        unmetered_calls=budgeted.unmetered_calls,
    )


def memory_session(
    fragment: MemoryWiringFragment | FragmentData,
    model: Model,
    *,
    cwd: Path,
    tenant: Tenant | None = None,
    now: Clock = utc_now,
    log: Callable[[str], None],
) -> ModelSession:
    """The session a host hands ``run_dream``: the spec's memory wired into a catalog of its
    own (memory tools only), released when the session ends. Its log goes where the spec's
    session logs live (the database with ``memory.state: postgres``)."""
    parsed = parse_fragment(fragment)

    def session(settings: DreamSettings, price: ModelPrice) -> ModelPhase:
        catalog = ToolCatalog()
        wired = wire_memory(
            fragment, MemoryDeps(catalog=catalog, cwd=cwd, tenant=tenant, log=log, now=now)
        )
        try:
            layout = StoreLayout.for_cwd(cwd, fragment.spec_name, tenant)
            session_log = None
            if state_in_database(parsed):
                logs = session_logs_for(parsed, tenant, layout.sessions_dir, now)
                session_log = logs.open(new_session_id())
            return run_bounded_session(
                model,
                price,
                settings,
                wired_catalog=catalog,
                options=wired.options,
                layout=layout,
                now=now,
                log=log,
                session_log=session_log,
            )
        finally:
            wired.close()

    return session
