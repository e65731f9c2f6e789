"""The bounded session of ``mode: full``: memory tools only, and it stops at the budget."""

from __future__ import annotations

from pathlib import Path

from dream_support import NOW, Clock

from specwire.runtime.core.fragment import MemoryWiringFragment
from specwire.runtime.core.paths import SPECWIRE_DIRNAME, StoreLayout
from specwire.runtime.dream import DreamSettings, run_dream
from specwire.runtime.dream.model_phase import ModelPrice
from specwire.runtime.facts.store import FactStore
from specwire.runtime.hosts.dream_session import STOP_NOTE, BudgetedModel, call_cost, memory_session
from specwire.runtime.models.fallback import FallbackModel
from specwire.runtime.models.scripted import FailingModel, ScriptedModel
from specwire.runtime.models.types import ModelRequest, ModelResponse, Usage, UserMessage
from specwire.runtime.sessions.log import read_events

FRAGMENT = MemoryWiringFragment.model_validate(
    {
        "spec_name": "demo",
        "memory": {},
        "continuity": {
            "plan": True,
            "proof": "ladder",
            "ledger": True,
            "handoff": True,
            "scope": "spec",
        },
    }
)
# A dollar per thousand tokens: any scripted call costs cents.
PRICE = ModelPrice(input_usd_per_mtok=1000.0, output_usd_per_mtok=1000.0)
TASK = "steps:\nremember: deploys go out on fridays\nremember: the user's name is Ada"


def _quiet(line: str) -> None:
    return None


def _run(tmp_path: Path, budget: float, price: ModelPrice = PRICE) -> tuple[StoreLayout, object]:
    layout = StoreLayout.for_cwd(tmp_path, "demo")
    layout.state_dir.mkdir(parents=True)
    settings = DreamSettings(every_s=3600, mode="full", budget_usd=budget, instructions=TASK)
    session = memory_session(FRAGMENT, ScriptedModel(), cwd=tmp_path, now=Clock(NOW), log=_quiet)
    outcome = run_dream(
        layout,
        settings,
        now=Clock(NOW),
        model_id="scripted",
        price_of=lambda model_id: price if model_id == "scripted" else None,
        model_session=session,
    )
    return layout, outcome


def _facts(layout: StoreLayout) -> list[str]:
    with FactStore.open(layout.facts_db, now=Clock(NOW)) as store:
        return sorted(s.fact.text for s in store.list_facts() if s.status == "live")


def test_with_room_in_the_budget_the_session_acts_through_the_memory_tools(
    tmp_path: Path,
) -> None:
    layout, outcome = _run(tmp_path, budget=100.0)
    assert outcome.status == "ok", outcome.errors  # type: ignore[attr-defined]
    model = outcome.model  # type: ignore[attr-defined]
    assert model.ran and model.reason is None and 0 < model.spent_usd < 100.0
    assert _facts(layout) == ["deploys go out on fridays", "the user's name is Ada"]
    [log] = list((tmp_path / SPECWIRE_DIRNAME / "sessions").glob("sess_*.jsonl"))
    events = list(read_events(log))
    start = next(e for e in events if e.type == "session_start")
    assert start.payload["target"] == "dream"
    used = {e.payload["name"] for e in events if e.type == "tool_use"}
    assert used == {"Remember"}


def test_the_session_stops_at_the_budget(tmp_path: Path) -> None:
    # A dollar a million tokens: the first call's prompt (about 3,000 tokens) fits in $0.004,
    # the second's (the first's and its answer, more) no longer fits in what is left.
    layout, outcome = _run(tmp_path, budget=0.004, price=ModelPrice(1.0, 1.0))
    model = outcome.model  # type: ignore[attr-defined]
    assert model.ran and model.reason == "stopped at the budget"
    assert model.calls == 1 and 0 < model.spent_usd <= 0.004
    assert _facts(layout) == ["deploys go out on fridays"]  # the second call never happened


def test_a_model_without_usage_spends_the_whole_budget_on_its_first_call() -> None:
    class Silent:
        model_id = "silent"

        def complete(self, request: ModelRequest) -> ModelResponse:
            return ModelResponse(text="ok")

    budgeted = BudgetedModel(Silent(), PRICE, 1.0)
    request = ModelRequest(system=[], messages=[UserMessage("hi")], tools=[])
    assert budgeted.complete(request).text == "ok"
    assert budgeted.complete(request).text == STOP_NOTE
    assert budgeted.calls == 1 and budgeted.stopped


def test_call_cost() -> None:
    assert call_cost(Usage(input=1_000_000, output=500_000), ModelPrice(3.0, 15.0)) == 10.5


def test_a_call_answered_by_a_fallback_model_spends_the_whole_budget() -> None:
    """The session is priced by the model's id when it starts: the primary's. A call the
    primary failed and a fallback answered was metered at the primary's price (claude-haiku's
    for claude-opus's tokens: ~15x under), so the budget stop let the fallback overspend it.
    That call's price is unknown: it counts as the whole budget, as an unmetered call does."""

    class Answering:
        model_id = "claude-opus-4-1"

        def complete(self, request: ModelRequest) -> ModelResponse:
            return ModelResponse(text="ok", usage=Usage(input=10, output=10))

    chain = FallbackModel([FailingModel(), Answering()], log=_quiet)
    budgeted = BudgetedModel(chain, ModelPrice(0.0, 0.0), 1.0)
    request = ModelRequest(system=[], messages=[UserMessage("hi")], tools=[])
    assert budgeted.complete(request).text == "ok"
    assert budgeted.spent_usd >= budgeted.budget_usd
    assert budgeted.complete(request).text == STOP_NOTE
    assert budgeted.calls == 1 and budgeted.stopped


def test_a_session_that_fails_after_spending_keeps_what_it_spent(tmp_path: Path) -> None:
    """Review H10: a model phase that failed mid-session (the provider's 5xx after retries on
    the second call) was recorded as not run: its first call's tokens and cost were left out of
    the outcome, ``codegen dream status`` and the state's ``modelLedger`` (which must carry
    every model phase's calls and cost), though the provider billed them."""
    from specwire.runtime.dream.state import read_state
    from specwire.runtime.models.errors import ModelServerError

    class FailsOnSecondCall:
        model_id = "scripted"

        def __init__(self) -> None:
            self.inner = ScriptedModel()
            self.calls = 0

        def complete(self, request: ModelRequest) -> ModelResponse:
            self.calls += 1
            if self.calls > 1:
                raise ModelServerError("the provider kept answering 503")
            return self.inner.complete(request)

    layout = StoreLayout.for_cwd(tmp_path, "demo")
    layout.state_dir.mkdir(parents=True)
    settings = DreamSettings(every_s=3600, mode="full", budget_usd=100.0, instructions=TASK)
    session = memory_session(
        FRAGMENT, FailsOnSecondCall(), cwd=tmp_path, now=Clock(NOW), log=_quiet
    )
    outcome = run_dream(
        layout,
        settings,
        now=Clock(NOW),
        model_id="scripted",
        price_of=lambda model_id: PRICE if model_id == "scripted" else None,
        model_session=session,
    )
    assert outcome.status == "partial"
    assert any("503" in error for error in outcome.errors)
    model = outcome.model
    assert model.ran and model.calls == 1 and model.spent_usd > 0
    assert model.reason is not None and "503" in model.reason
    state = read_state(layout)
    assert state is not None
    ledger = state["modelLedger"]
    assert ledger["calls"] == 1 and ledger["spentUsd"] == model.spent_usd
    assert _facts(layout) == ["deploys go out on fridays"]  # the first call's work is kept
