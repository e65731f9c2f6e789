"""What a model's tokens cost: a dated list-price table, and the overrides a spec or a file give.

Prices are USD per million tokens: ``input`` (prompt tokens read fresh), ``output``, and
``cached_input`` (prompt tokens read from the provider's prompt cache). ``Usage.input`` counts
every prompt token, cached ones included, so a call costs
``(input - cached) × input + cached × cached_input + output × output`` per million.

The table holds the providers' published list prices for the standard tier on
``PRICES_AS_OF`` (docs/owner.md#prices). It does not price Anthropic's cache writes (billed at 1.25×
input; ``Usage`` counts them as plain input, so they are priced as input) nor long-context or
batch tiers. Prices change: an owner overrides them in the spec (``memory.dream.prices``) or in
a JSON file named by ``SPECWIRE_PRICES_FILE`` (``{"models": {"<model>": {"input": …,
"output": …, "cached_input": …}}}``); the spec wins over the file, the file over the table.

A model is found by its id without the provider prefix (``anthropic/``, ``openai/``), by the
key that equals it or of which it is a dated snapshot or ``-latest`` alias
(``claude-sonnet-4-5`` prices ``claude-sonnet-4-5-20250929``, ``gpt-4o`` prices
``gpt-4o-2024-11-20``; ``gpt-5`` does not price ``gpt-5-pro``). ``openai-compatible/…`` and
``scripted`` models have no list price: only an override prices them.
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from specwire.runtime.models.types import Usage

PRICES_AS_OF: Final = "2026-12-02"
PRICES_FILE_ENV: Final = "SPECWIRE_PRICES_FILE"
_PROVIDER_PREFIXES: Final = ("anthropic/", "openai/")
# What follows a listed id in one of its snapshots: -20250929, -2024-08-06, -latest.
_SNAPSHOT_SUFFIX: Final = re.compile(r"-(?:\d{8}|\d{4}-\d{2}-\d{2}|latest)")
# A prices file larger than this is refused (it holds a few dozen lines).
MAX_PRICES_FILE_BYTES: Final = 256 * 1024


class PriceTableError(ValueError):
    """A price override that cannot be used (one line: which entry and why)."""


@dataclass(frozen=True)
class ModelPrice:
    """USD per million tokens."""

    input_usd_per_mtok: float
    output_usd_per_mtok: float
    cached_input_usd_per_mtok: float | None = None  # None: cached tokens cost as input

    def __post_init__(self) -> None:
        for name in ("input_usd_per_mtok", "output_usd_per_mtok", "cached_input_usd_per_mtok"):
            value = getattr(self, name)
            if value is None and name.startswith("cached"):
                continue
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise PriceTableError(f"{name} must be a number, not {value!r}")
            if not math.isfinite(value) or value < 0:
                raise PriceTableError(f"{name} must be a number ≥ 0, not {value!r}")

    def cost_usd(self, usage: Usage) -> float:
        """USD of one call's reported usage."""
        cached = min(max(usage.cached, 0), max(usage.input, 0))
        fresh = max(usage.input, 0) - cached
        cached_rate = (
            self.input_usd_per_mtok
            if self.cached_input_usd_per_mtok is None
            else self.cached_input_usd_per_mtok
        )
        return (
            fresh * self.input_usd_per_mtok
            + cached * cached_rate
            + max(usage.output, 0) * self.output_usd_per_mtok
        ) / 1_000_000


def _p(input_usd: float, output_usd: float, cached_usd: float) -> ModelPrice:
    return ModelPrice(input_usd, output_usd, cached_usd)


# The providers' list prices (standard tier, USD per million tokens) on PRICES_AS_OF.
LIST_PRICES: Final[Mapping[str, ModelPrice]] = {
    # Anthropic
    "claude-3-haiku": _p(0.25, 1.25, 0.03),
    "claude-3-5-haiku": _p(0.80, 4.00, 0.08),
    "claude-3-7-sonnet": _p(3.00, 15.00, 0.30),
    "claude-haiku-4-5": _p(1.00, 5.00, 0.10),
    "claude-sonnet-4": _p(3.00, 15.00, 0.30),
    "claude-sonnet-4-5": _p(3.00, 15.00, 0.30),
    "claude-sonnet-4-6": _p(3.00, 15.00, 0.30),
    "claude-opus-4": _p(15.00, 75.00, 1.50),
    "claude-opus-4-1": _p(15.00, 75.00, 1.50),
    "claude-opus-4-5": _p(5.00, 25.00, 0.50),
    # OpenAI
    "gpt-3.5-turbo": _p(0.50, 1.50, 0.50),
    "gpt-4": _p(30.00, 60.00, 30.00),
    "gpt-4-turbo": _p(10.00, 30.00, 10.00),
    "gpt-4o": _p(2.50, 10.00, 1.25),
    "gpt-4o-mini": _p(0.15, 0.60, 0.075),
    "gpt-4.1": _p(2.00, 8.00, 0.50),
    "gpt-4.1-mini": _p(0.40, 1.60, 0.10),
    "gpt-4.1-nano": _p(0.10, 0.40, 0.025),
    "gpt-5": _p(1.25, 10.00, 0.125),
    "gpt-5-chat-latest": _p(1.25, 10.00, 0.125),
    "gpt-5-mini": _p(0.25, 2.00, 0.025),
    "gpt-5-nano": _p(0.05, 0.40, 0.005),
    "gpt-5.1": _p(1.25, 10.00, 0.125),
    "o1": _p(15.00, 60.00, 7.50),
    "o1-mini": _p(1.10, 4.40, 0.55),
    "o1-pro": _p(150.00, 600.00, 150.00),
    "o3": _p(2.00, 8.00, 0.50),
    "o3-mini": _p(1.10, 4.40, 0.55),
    "o3-pro": _p(20.00, 80.00, 20.00),
    "o4-mini": _p(1.10, 4.40, 0.275),
}

PriceLookup = Callable[[str], ModelPrice | None]


def _bare(model_id: str) -> str:
    for prefix in _PROVIDER_PREFIXES:
        if model_id.startswith(prefix):
            return model_id[len(prefix) :]
    return model_id


def find_price(table: Mapping[str, ModelPrice], model_id: str) -> ModelPrice | None:
    """The price of ``model_id`` in ``table``: an exact key (with or without the provider
    prefix), else the key the bare id is a dated snapshot (or ``-latest`` alias) of. Any other
    variant (``gpt-5-pro``, ``gpt-4-32k``) is not priced as its family: it may cost many times
    more, and an under-priced model would overspend the dream's budget."""
    if model_id in table:
        return table[model_id]
    bare = _bare(model_id)
    if bare in table:
        return table[bare]
    for key in table:
        stem = _bare(key)
        if bare.startswith(stem + "-") and _SNAPSHOT_SUFFIX.fullmatch(bare[len(stem) :]):
            return table[key]
    return None


def price_from_data(where: str, data: Any) -> ModelPrice:
    """``{"input": …, "output": …, "cached_input"?: …}`` as a price (``PriceTableError``)."""
    if not isinstance(data, Mapping):
        raise PriceTableError(f"{where}: expected {{input, output, cached_input?}}")
    unknown = sorted(str(key) for key in data if key not in ("input", "output", "cached_input"))
    if unknown:
        raise PriceTableError(f"{where}: unknown key {unknown[0]!r} (input, output, cached_input)")
    if "input" not in data or "output" not in data:
        raise PriceTableError(f"{where}: needs input and output (USD per million tokens)")
    try:
        return ModelPrice(data["input"], data["output"], data.get("cached_input"))
    except PriceTableError as exc:
        raise PriceTableError(f"{where}: {exc}") from None


def read_prices_file(path: Path) -> dict[str, ModelPrice]:
    """A prices file: ``{"models": {"<model>": {"input", "output", "cached_input"?}}}``."""
    try:
        size = path.stat().st_size
        if size > MAX_PRICES_FILE_BYTES:
            raise PriceTableError(f"{PRICES_FILE_ENV} {path}: larger than {MAX_PRICES_FILE_BYTES}")
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        if isinstance(exc, PriceTableError):
            raise
        raise PriceTableError(f"{PRICES_FILE_ENV} {path}: cannot read it ({exc})") from None
    models = data.get("models") if isinstance(data, dict) else None
    if not isinstance(models, dict):
        raise PriceTableError(f'{PRICES_FILE_ENV} {path}: expected {{"models": {{…}}}}')
    return {
        str(model): price_from_data(f"{PRICES_FILE_ENV} {path}: {model}", entry)
        for model, entry in models.items()
    }


def price_lookup(
    spec_prices: Mapping[str, ModelPrice] | None = None,
    *,
    environ: Mapping[str, str] | None = None,
) -> PriceLookup:
    """The lookup the dream uses: the spec's prices, then the file ``SPECWIRE_PRICES_FILE``
    names, then ``LIST_PRICES`` (``PriceTableError`` when the file is unusable)."""
    env = os.environ if environ is None else environ
    named = env.get(PRICES_FILE_ENV, "").strip()
    layers: list[Mapping[str, ModelPrice]] = []
    if spec_prices:
        layers.append(spec_prices)
    if named:
        layers.append(read_prices_file(Path(named)))
    layers.append(LIST_PRICES)

    def lookup(model_id: str) -> ModelPrice | None:
        for layer in layers:
            found = find_price(layer, model_id)
            if found is not None:
                return found
        return None

    return lookup
