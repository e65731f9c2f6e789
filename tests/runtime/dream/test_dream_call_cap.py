"""The dream's budget caps each call: the answer's max tokens come from what the rest of the
budget pays for at the output price, and a call whose prompt alone would pass it is not made.
The scripted model reports its usage and honours the cap as a provider honours ``max_tokens``."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from specwire.runtime.dream.model_phase import ModelPrice
from specwire.runtime.hosts.dream_session import MIN_OUTPUT_TOKENS, STOP_NOTE, BudgetedModel
from specwire.runtime.models.estimate import prompt_tokens
from specwire.runtime.models.provider import capped_max_tokens
from specwire.runtime.models.scripted import ScriptedModel
from specwire.runtime.models.types import (
    ModelRequest,
    ModelResponse,
    ToolSpec,
    Usage,
    UserMessage,
)

# Input a dollar a million tokens, output ten: an answer token costs ten prompt tokens.
PRICE = ModelPrice(input_usd_per_mtok=1.0, output_usd_per_mtok=10.0)


REMEMBER = ToolSpec("Remember", "Keep a fact.", {"type": "object"})


def _request(text: str, tools: list[ToolSpec] | None = None) -> ModelRequest:
    return ModelRequest(system=[], messages=[UserMessage(text)], tools=tools or [])


@dataclass
class Recording:
    """Answers ``reply`` with ``usage``, and keeps every request it was sent."""

    usage: Usage
    reply: str = "ok"
    model_id: str = "recording"
    seen: list[ModelRequest] = field(default_factory=list)

    def complete(self, request: ModelRequest) -> ModelResponse:
        self.seen.append(request)
        return ModelResponse(text=self.reply, usage=self.usage)


def test_each_call_is_capped_at_what_the_rest_of_the_budget_pays_for() -> None:
    model = Recording(Usage(input=100, output=50))
    request = _request("x" * 400)  # 100 prompt tokens
    budgeted = BudgetedModel(model, PRICE, budget_usd=0.01)
    budgeted.complete(request)
    # $0.01 - 100 prompt tokens at $1/M = $0.0099 → 990 answer tokens at $10/M.
    assert model.seen[0].max_output_tokens == 990
    assert budgeted.spent_usd == pytest.approx(0.0006)  # 100 at $1/M + 50 at $10/M
    budgeted.complete(request)
    # The next prompt is at least the last prompt and its answer (150 tokens, $0.00015):
    # ($0.01 - $0.0006 - $0.00015) at $10/M.
    assert model.seen[1].max_output_tokens == 925


def test_a_caller_s_own_lower_cap_is_kept() -> None:
    model = Recording(Usage(input=10, output=10))
    budgeted = BudgetedModel(model, PRICE, budget_usd=1.0)
    request = ModelRequest(system=[], messages=[UserMessage("hi")], tools=[], max_output_tokens=64)
    budgeted.complete(request)
    assert model.seen[0].max_output_tokens == 64


def test_a_call_whose_prompt_alone_passes_the_budget_is_not_made() -> None:
    model = Recording(Usage(input=1000, output=1))
    request = _request("y" * 4000)  # 1,000 prompt tokens: $0.001
    budgeted = BudgetedModel(model, PRICE, budget_usd=0.0009)
    assert budgeted.complete(request).text == STOP_NOTE
    assert model.seen == [] and budgeted.calls == 0 and budgeted.spent_usd == 0
    assert budgeted.stopped and "1000 tokens" in (budgeted.stop_reason or "")


def test_a_call_left_too_few_answer_tokens_is_not_made() -> None:
    model = Recording(Usage(input=100, output=1))
    request = _request("x" * 400)
    room_for = MIN_OUTPUT_TOKENS - 1
    budget = (100 * 1.0 + room_for * 10.0) / 1_000_000
    budgeted = BudgetedModel(model, PRICE, budget_usd=budget)
    assert budgeted.complete(request).text == STOP_NOTE and model.seen == []


def test_free_answers_are_not_capped() -> None:
    model = Recording(Usage(input=10, output=10))
    BudgetedModel(model, ModelPrice(1.0, 0.0), budget_usd=1.0).complete(_request("hi"))
    assert model.seen[0].max_output_tokens is None


@pytest.mark.parametrize("budget", [0.0004, 0.0011, 0.002, 0.005])
def test_the_scripted_model_never_passes_the_budget_by_its_answer(budget: float) -> None:
    """The scripted model's usage is its estimate, so the guard's estimate is exact: whatever
    the budget, the spend stays within it (a long answer is cut to the cap)."""
    budgeted = BudgetedModel(ScriptedModel(), PRICE, budget_usd=budget)
    request = _request("remember: " + "a long fact to keep " * 40, [REMEMBER])
    for _ in range(100):
        response = budgeted.complete(request)
        if response.text == STOP_NOTE:
            break
    assert budgeted.spent_usd <= budget + 1e-12
    assert budgeted.calls >= 1
    assert budgeted.stopped


def test_the_scripted_model_cuts_an_answer_over_the_cap_and_reports_it() -> None:
    request = _request("remember: " + "deploys go out on fridays " * 20, [REMEMBER])
    whole = ScriptedModel().complete(request)
    assert whole.tool_calls and whole.usage is not None and whole.usage.output > 20
    capped = ScriptedModel().complete(
        ModelRequest(request.system, request.messages, request.tools, max_output_tokens=20)
    )
    assert capped.tool_calls == []  # an unfinished tool call is dropped, never run
    assert capped.usage is not None and capped.usage.output <= 20
    assert capped.usage.input == prompt_tokens(request)


def test_the_adapters_send_the_lower_of_their_limit_and_the_cap() -> None:
    assert capped_max_tokens(4096, _request("hi")) == 4096
    capped = ModelRequest([], [UserMessage("hi")], [], max_output_tokens=300)
    assert capped_max_tokens(4096, capped) == 300
    assert capped_max_tokens(200, capped) == 200
    zero = ModelRequest([], [UserMessage("hi")], [], max_output_tokens=0)
    assert capped_max_tokens(4096, zero) == 1
