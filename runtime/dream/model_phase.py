"""The model phase of ``mode: full``: one bounded session acting only through the memory tools.

It may run only when the mode is ``full``, a ``budget_usd`` above zero is set, and the model has
a price (``runtime.models.prices``: the dated list-price table, overridden by the spec's
``memory.dream.prices`` or ``SPECWIRE_PRICES_FILE``), so that the budget can be enforced. When
every gate passes, the session a host provides runs (``runtime.hosts.dream_session``); without
one, the outcome says so and nothing runs.
"""

from __future__ import annotations

from collections.abc import Callable

from specwire.runtime.core.fragment_data import ModelPriceData
from specwire.runtime.dream.outcome import ModelPhase
from specwire.runtime.dream.settings import DreamSettings
from specwire.runtime.models.prices import PRICES_AS_OF, ModelPrice, PriceLookup, price_lookup

__all__ = [
    "ModelPrice",
    "ModelSession",
    "PriceLookup",
    "list_prices",
    "model_phase",
    "refusal",
    "spec_prices",
]

NOT_WIRED = (
    "not run: no model session was given (only the deterministic phase ran; "
    "`codegen dream run --bundle AGENT_PY` runs it with the bundle's model)"
)


def list_prices(model_id: str) -> ModelPrice | None:
    """The table's list price of ``model_id`` (no overrides)."""
    return price_lookup({}, environ={})(model_id)


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
            f"refused: the model {model_id} has no price (not in the price table of "
            f"{PRICES_AS_OF}, memory.dream.prices or SPECWIRE_PRICES_FILE), so its budget "
            "cannot be enforced"
        )
    return None


# What a host hands ``run_dream`` for ``mode: full`` (``hosts.dream_session.memory_session``).
ModelSession = Callable[[DreamSettings, ModelPrice], ModelPhase]


def model_phase(
    settings: DreamSettings,
    model_id: str | None,
    price_of: PriceLookup,
    session: ModelSession | None,
    before: Callable[[], None] | None = None,
) -> ModelPhase:
    """The phase's outcome; ``before`` runs once every gate has passed, just before the session
    (the engine records there that this window's model phase started)."""
    reason = refusal(settings, model_id, price_of)
    if reason is not None:
        return ModelPhase(ran=False, reason=reason)
    price = price_of(model_id or "")
    if session is None or price is None:
        return ModelPhase(ran=False, reason=NOT_WIRED)
    if before is not None:
        before()
    return session(settings, price)


def spec_prices(prices: tuple[ModelPriceData, ...] | None) -> dict[str, ModelPrice]:
    """The spec's ``memory.dream.prices`` as the price table's overrides."""
    return {
        price.model: ModelPrice(
            price.input_usd_per_mtok, price.output_usd_per_mtok, price.cached_input_usd_per_mtok
        )
        for price in prices or ()
    }
