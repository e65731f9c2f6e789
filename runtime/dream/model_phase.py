"""The model phase of ``mode: full``: one bounded session acting only through the memory tools.

It may run only when the mode is ``full``, a ``budget_usd`` above zero is set, and the model has
a price, so that the budget can be enforced. specwire ships no model price table
(``runtime.models`` records token usage, never a price), so ``no_price_table`` prices nothing
and every model phase is refused, with that reason, until a table is passed in. When every gate
passes, the session a host provides runs (``runtime.hosts.dream_session.memory_session``);
without one (``codegen dream run`` has no spec to wire), the outcome says so and nothing runs.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from specwire.runtime.dream.outcome import ModelPhase
from specwire.runtime.dream.settings import DreamSettings


@dataclass(frozen=True)
class ModelPrice:
    input_usd_per_mtok: float
    output_usd_per_mtok: float


PriceLookup = Callable[[str], ModelPrice | None]

NOT_WIRED = "not run: the bounded model session is not wired yet (only the deterministic phase ran)"


def no_price_table(model_id: str) -> ModelPrice | None:
    """The runtime's price table: there is none, so no model has a price."""
    return None


def refusal(settings: DreamSettings, model_id: str | None, price_of: PriceLookup) -> str | None:
    """Why the model phase may not run (None: it may)."""
    if settings.mode != "full":
        return "mode is deterministic: no model phase"
    if settings.budget_usd is None or settings.budget_usd <= 0:
        return "refused: mode full needs a budget_usd above 0, and none is set"
    if not model_id:
        return "refused: no model is configured for the model phase"
    if price_of(model_id) is None:
        return (
            f"refused: the model {model_id} has no price (the runtime has no price table), "
            "so its budget cannot be enforced"
        )
    return None


# What a host hands ``run_dream`` for ``mode: full`` (``hosts.dream_session.memory_session``).
ModelSession = Callable[[DreamSettings, ModelPrice], ModelPhase]


def model_phase(
    settings: DreamSettings,
    model_id: str | None,
    price_of: PriceLookup,
    session: ModelSession | None,
) -> ModelPhase:
    reason = refusal(settings, model_id, price_of)
    if reason is not None:
        return ModelPhase(ran=False, reason=reason)
    price = price_of(model_id or "")
    if session is None or price is None:
        return ModelPhase(ran=False, reason=NOT_WIRED)
    return session(settings, price)
