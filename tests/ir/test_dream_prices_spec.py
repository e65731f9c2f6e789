"""``memory.dream.prices``: located errors for each rule, the lowering, and the bytes of specs
without the key."""

from __future__ import annotations

import pytest

from specwire.ir import SpecError, load_spec_text
from specwire.ir.lowering import lower
from specwire.runtime.core.fragment import PROVIDERS_FRAGMENT_VERSION

HEAD = (
    "name: s\ntarget: cli\nagent: {model: scripted, instructions: i}\n"
    "memory:\n  dream:\n    every: 1h\n    prices:\n"
)  # rows start at line 8

BAD = [
    (
        "price-model-not-an-id",
        HEAD + '      "a b": {input: 1, output: 2}\n',
        [
            '8:7: memory.dream.prices."a b": "a b" is not a model id or family: letters, digits '
            "and . _ : / -, starting with a letter or digit, at most 128 (e.g. claude-sonnet-4-5)"
        ],
    ),
    (
        "price-without-output",
        HEAD + "      scripted: {input: 1}\n",
        ['8:7: memory.dream.prices.scripted: missing required key "output"'],
    ),
    (
        "price-negative",
        HEAD + "      scripted: {input: -1, output: 2}\n",
        ["8:25: memory.dream.prices.scripted.input: must be a finite number of 0 or more (got -1)"],
    ),
    (
        "price-unknown-key",
        HEAD + "      scripted: {input: 1, output: 2, cache: 1}\n",
        [
            '8:39: memory.dream.prices.scripted.cache: unknown key "cache" (did you mean '
            '"cachedInput"?)'
        ],
    ),
]


@pytest.mark.parametrize(("text", "expected"), [row[1:] for row in BAD], ids=[r[0] for r in BAD])
def test_a_bad_price_is_a_located_error(text: str, expected: list[str]) -> None:
    with pytest.raises(SpecError) as caught:
        load_spec_text(text, "spec.yaml")
    assert [str(issue) for issue in caught.value.issues] == [f"spec.yaml:{e}" for e in expected]


def test_prices_lower_sorted_into_a_version_6_fragment() -> None:
    spec = load_spec_text(
        HEAD
        + "      scripted: {input: 3, output: 15}\n"
        + "      claude-sonnet-4-5: {input: 2.5, output: 12, cached_input: 0.25}\n",
        "spec.yaml",
    )
    fragment = lower(spec).to_data()
    assert fragment["version"] == 6
    assert fragment["memory"]["dream"]["prices"] == [
        {
            "model": "claude-sonnet-4-5",
            "input_usd_per_mtok": 2.5,
            "output_usd_per_mtok": 12.0,
            "cached_input_usd_per_mtok": 0.25,
        },
        {"model": "scripted", "input_usd_per_mtok": 3.0, "output_usd_per_mtok": 15.0},
    ]


def test_a_dream_without_prices_keeps_its_fragment_version() -> None:
    spec = load_spec_text(HEAD.removesuffix("    prices:\n"), "spec.yaml")
    fragment = lower(spec).to_data()
    assert fragment["version"] < PROVIDERS_FRAGMENT_VERSION
    assert "prices" not in fragment["memory"]["dream"]
