"""The bounded model session of ``mode: full``: one session through the agent loop, offered
only the memory tools, that stops at the budget.

``BudgetedModel`` prices every call from the usage the model reports and, once the spend
reaches the budget, answers with a stop note instead of calling the model again, so the turn
(and the session: one message, one turn) ends. Before each call it estimates the prompt (the
larger of about four characters a token, ``runtime.models.estimate``, and the previous call's
reported prompt plus its answer: the conversation only grows) and caps the call's answer
(``ModelRequest.max_output_tokens``, which the adapters send as ``max_tokens`` /
``max_completion_tokens``) to what the rest of the budget pays for at the output price; a call
whose prompt alone would leave fewer than ``MIN_OUTPUT_TOKENS`` is not made. One call can so
pass the budget only by what its prompt's estimate fell short of the provider's count. A model
that reports no usage cannot be metered, nor can a call a fallback model answered (the price is
the primary's): such a call is taken to spend the whole budget.

``memory_session`` builds the ``ModelSession`` a host passes to ``run_dream``: the catalog holds
only what ``wire_memory`` registers (facts, continuity, wiki tools), never file tools or a shell.
``metered`` hands what each run used to the host (a managed tenant's usage ledger records it as
the dream's kind: ``dream_usage``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from specwire.runtime.core.clock import Clock, utc_now
from specwire.runtime.core.fragment import MemoryWiringFragment
from specwire.runtime.core.fragment_data import FragmentData
from specwire.runtime.core.ids import new_session_id
from specwire.runtime.core.paths import StoreLayout
from specwire.runtime.core.scopes import Audience
from specwire.runtime.core.seams import LoopOptions
from specwire.runtime.core.tenancy import Tenant
from specwire.runtime.core.tool_types import ToolCatalog
from specwire.runtime.dream.model_phase import ModelPrice, ModelSession
from specwire.runtime.dream.outcome import ModelPhase, ModelPhaseFailed
from specwire.runtime.dream.settings import DreamSettings
from specwire.runtime.loop.chat import run_chat_loop
from specwire.runtime.models.estimate import prompt_tokens
from specwire.runtime.models.types import Model, ModelRequest, ModelResponse, Usage
from specwire.runtime.sessions.log import SessionLog
from specwire.runtime.sessions.store import SessionRecorder
from specwire.runtime.usage.totals import DreamUsage, micro_usd
from specwire.runtime.wiring import (
    MemoryDeps,
    parse_fragment,
    session_logs_for,
    state_in_database,
    wire_memory,
)

STOP_NOTE = "[stopped: the dream's budget is spent]"
# A call the budget leaves fewer answer tokens than this is not made: a tool call or a useful
# line does not fit (the session stops there instead).
MIN_OUTPUT_TOKENS = 16
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
        # Why the session stopped before a call (None: it did not, or the budget was spent).
        self.stop_reason: str | None = None
        # The prompt the next call sends is at least the last one and its answer: the
        # conversation only grows within the session.
        self._grown = 0

    @property
    def model_id(self) -> str:
        return self._model.model_id

    def prompt_estimate(self, request: ModelRequest) -> int:
        """The tokens ``request``'s prompt is taken to cost before it is sent: the larger of
        the text estimate and what the previous call reported plus its answer."""
        return max(prompt_tokens(request), self._grown)

    def output_cap(self, request: ModelRequest) -> int | None:
        """The answer tokens the remaining budget pays for after ``request``'s prompt (None:
        answers are free at this price); 0 when the prompt alone passes the budget."""
        room = self.budget_usd - self.spent_usd
        prompt_usd = self.prompt_estimate(request) * self._price.input_usd_per_mtok / 1_000_000
        if prompt_usd >= room:
            return 0
        if self._price.output_usd_per_mtok <= 0:
            return None
        return int((room - prompt_usd) * 1_000_000 // self._price.output_usd_per_mtok)

    def complete(self, request: ModelRequest) -> ModelResponse:
        if self.spent_usd >= self.budget_usd:
            return self._stop(None)
        cap = self.output_cap(request)
        if cap is not None and cap < MIN_OUTPUT_TOKENS:
            prompt = self.prompt_estimate(request)
            return self._stop(
                f"the next call's prompt (about {prompt} tokens) would leave under "
                f"{MIN_OUTPUT_TOKENS} answer tokens in the budget"
            )
        if cap is not None and request.max_output_tokens is not None:
            cap = min(cap, request.max_output_tokens)
        response = self._model.complete(replace(request, max_output_tokens=cap))
        self.calls += 1
        if response.usage is not None:
            self.usage = self.usage + response.usage
            self._grown = response.usage.input + response.usage.output
        if response.usage is None or self._model.model_id != self._priced_id:
            # Unmetered, or answered by a model the price is not for: its cost is unknown.
            self.unmetered_calls += 1
            self.spent_usd = max(self.spent_usd, self.budget_usd)
        else:
            self.spent_usd += call_cost(response.usage, self._price)
        return response

    def _stop(self, reason: str | None) -> ModelResponse:
        self.stopped = True
        self.stop_reason = self.stop_reason or reason
        return ModelResponse(text=STOP_NOTE)


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
    try:
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
    except Exception as exc:
        # The calls made before the failure were billed: the record keeps them.
        raise ModelPhaseFailed(str(exc), _phase(model, budgeted, f"failed: {exc}")) from exc
    spent = budgeted.stopped or budgeted.spent_usd >= budgeted.budget_usd
    reason = "stopped at the budget" if spent else None
    usage = budgeted.usage
    why = f"; {budgeted.stop_reason}" if budgeted.stop_reason else ""
    log(
        f"[dream] model phase: {budgeted.calls} call(s), {usage.input} input ({usage.cached} "
        f"cached) and {usage.output} output tokens, ${budgeted.spent_usd:.6f} of "
        f"${budgeted.budget_usd:g} (session {result.session_id}{why})\n"
    )
    return _phase(model, budgeted, reason)


def _phase(model: Model, budgeted: BudgetedModel, reason: str | None) -> ModelPhase:
    """What the session used, as its outcome records it."""
    usage = budgeted.usage
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
    session logs live (the database with ``memory.state: postgres``).

    The session is the agent's own agenda, nobody's conversation (CrewHaus's dream forces the
    spec scope): continuity is the spec's, and with ``memory.scope`` it reads and writes the
    agent-wide facts only, never a person's or a conversation's (the deterministic phase
    consolidates those)."""
    parsed = agent_own(parse_fragment(fragment))

    def session(settings: DreamSettings, price: ModelPrice) -> ModelPhase:
        catalog = ToolCatalog()
        wired = wire_memory(
            parsed,
            MemoryDeps(
                catalog=catalog,
                cwd=cwd,
                tenant=tenant,
                log=log,
                now=now,
                audience=None
                if parsed.memory is None or parsed.memory.scope is None
                else AGENT_ONLY,
            ),
        )
        try:
            layout = StoreLayout.for_cwd(cwd, parsed.spec_name, tenant)
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


def metered(session: ModelSession, record: Callable[[ModelPhase], None]) -> ModelSession:
    """``session``, with what each run's model phase used handed to ``record`` when it ends
    (a phase that failed midway too: its calls were billed). A managed host records it in the
    tenant's usage ledger (``dream_usage``)."""

    def run(settings: DreamSettings, price: ModelPrice) -> ModelPhase:
        try:
            phase = session(settings, price)
        except ModelPhaseFailed as exc:
            record(exc.phase)
            raise
        record(phase)
        return phase

    return run


def dream_usage(phase: ModelPhase) -> DreamUsage | None:
    """One model phase as the usage ledger's dream kind (``runtime.usage``); None when it made
    no call (nothing was spent)."""
    if not phase.ran or phase.calls <= 0:
        return None
    return DreamUsage(
        runs=1,
        calls=phase.calls,
        input=phase.input_tokens,
        output=phase.output_tokens,
        cached=phase.cached_tokens,
        cost_micro_usd=micro_usd(phase.spent_usd),
    )


# Nobody in particular: the agent itself (its recall sees the agent-wide key only).
AGENT_ONLY = Audience()


def agent_own(parsed: FragmentData) -> FragmentData:
    """``parsed`` as the agent's own session sees it (CrewHaus's dream forces the spec scope):
    continuity scoped to the spec, and a scoped spec's facts defaulting to the agent's key."""
    continuity = parsed.continuity
    if continuity is not None and continuity.scope != "spec":
        parsed = replace(parsed, continuity=replace(continuity, scope="spec"))
    memory = parsed.memory
    if memory is None or memory.scope is None or memory.scope.default == "agent":
        return parsed
    scope = replace(memory.scope, default="agent", follow_user=None)
    return replace(parsed, memory=replace(memory, scope=scope))
