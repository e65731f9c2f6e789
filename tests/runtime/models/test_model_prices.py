"""The dated price table: lookup by id, the cost of reported usage, and the overrides."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from specwire.runtime.models.prices import (
    LIST_PRICES,
    PRICES_FILE_ENV,
    ModelPrice,
    PriceTableError,
    find_price,
    price_from_data,
    price_lookup,
)
from specwire.runtime.models.types import Usage


@pytest.mark.parametrize(
    ("model_id", "key"),
    [
        ("claude-sonnet-4-5", "claude-sonnet-4-5"),
        ("claude-sonnet-4-5-20250929", "claude-sonnet-4-5"),
        ("anthropic/claude-opus-4-1-20250805", "claude-opus-4-1"),
        ("claude-opus-4-20250514", "claude-opus-4"),
        ("openai/gpt-4o-mini", "gpt-4o-mini"),
        ("gpt-4o-2024-11-20", "gpt-4o"),
        ("o3-mini", "o3-mini"),
    ],
)
def test_an_id_finds_its_longest_listed_family(model_id: str, key: str) -> None:
    assert find_price(LIST_PRICES, model_id) is LIST_PRICES[key]


@pytest.mark.parametrize("model_id", ["scripted", "openai-compatible/gpt-4o", "gpt-4.10", "o"])
def test_an_unlisted_id_has_no_price(model_id: str) -> None:
    assert find_price(LIST_PRICES, model_id) is None


@pytest.mark.parametrize(
    "model_id", ["gpt-5-pro", "gpt-4-32k", "o3-deep-research", "claude-opus-4-1-fast"]
)
def test_a_variant_of_a_listed_model_is_not_priced_as_it(model_id: str) -> None:
    # gpt-5-pro lists at $15/$120, not gpt-5's $1.25/$10: priced as its family, a dream's
    # budget would let it spend ~12x the budget. Only a dated snapshot (or -latest) of a listed
    # id takes its price; any other variant needs an override.
    assert find_price(LIST_PRICES, model_id) is None


@pytest.mark.parametrize(
    ("model_id", "key"),
    [("claude-3-7-sonnet-latest", "claude-3-7-sonnet"), ("gpt-4.1-2025-04-14", "gpt-4.1")],
)
def test_a_snapshot_or_latest_alias_takes_its_models_price(model_id: str, key: str) -> None:
    assert find_price(LIST_PRICES, model_id) is LIST_PRICES[key]


def test_cached_prompt_tokens_cost_the_cached_price() -> None:
    price = ModelPrice(3.0, 15.0, 0.3)
    usage = Usage(input=1_000_000, output=100_000, cached=400_000)
    # 600k fresh × $3 + 400k cached × $0.30 + 100k out × $15
    assert price.cost_usd(usage) == pytest.approx(1.8 + 0.12 + 1.5)
    assert ModelPrice(3.0, 15.0).cost_usd(usage) == pytest.approx(3.0 + 1.5)


def test_the_spec_wins_over_the_file_and_the_file_over_the_table(tmp_path: Path) -> None:
    prices = tmp_path / "prices.json"
    prices.write_text(
        json.dumps(
            {
                "models": {
                    "claude-sonnet-4-5": {"input": 2, "output": 10},
                    "scripted": {"input": 1, "output": 1},
                }
            }
        ),
        encoding="utf-8",
    )
    env = {PRICES_FILE_ENV: str(prices)}
    lookup = price_lookup({"scripted": ModelPrice(5.0, 5.0)}, environ=env)
    assert lookup("scripted") == ModelPrice(5.0, 5.0)
    assert lookup("claude-sonnet-4-5-20250929") == ModelPrice(2.0, 10.0)
    assert lookup("gpt-4o") == LIST_PRICES["gpt-4o"]
    assert price_lookup(environ={})("scripted") is None


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("not json", "cannot read it"),
        ('{"prices": {}}', 'expected {"models"'),
        ('{"models": {"m": {"input": 1}}}', "needs input and output"),
        ('{"models": {"m": {"input": -1, "output": 1}}}', "≥ 0"),
        ('{"models": {"m": {"input": 1, "output": 1, "cache": 1}}}', "unknown key 'cache'"),
    ],
)
def test_a_bad_prices_file_is_one_line(tmp_path: Path, text: str, message: str) -> None:
    prices = tmp_path / "prices.json"
    prices.write_text(text, encoding="utf-8")
    with pytest.raises(PriceTableError, match=message):
        price_lookup(environ={PRICES_FILE_ENV: str(prices)})


def test_a_price_entry_is_checked() -> None:
    assert price_from_data("x", {"input": 1, "output": 2, "cached_input": 0.1}) == ModelPrice(
        1.0, 2.0, 0.1
    )
    with pytest.raises(PriceTableError, match="must be a number"):
        price_from_data("x", {"input": True, "output": 2})
