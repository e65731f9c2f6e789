"""``memory.dream.prices``: the keys are model ids or families (``claude-sonnet-4-5``,
``openai/gpt-4o``, ``scripted``), looked up as the runtime's price table looks its keys up
(``runtime.models.prices``: exact, or the longest key that begins the id followed by ``-``)."""

from __future__ import annotations

import re
from typing import Annotated, Final

from pydantic import AfterValidator, WithJsonSchema

from specwire.ir.fields import fail
from specwire.ir.values import quote

PRICE_MODEL_RE: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:/-]{0,127}")


def _price_model(value: str) -> str:
    if PRICE_MODEL_RE.fullmatch(value) is None:
        fail(
            f"{quote(value)} is not a model id or family: letters, digits and . _ : / -, "
            "starting with a letter or digit, at most 128 (e.g. claude-sonnet-4-5)"
        )
    return value


PriceModelId = Annotated[
    str,
    AfterValidator(_price_model),
    WithJsonSchema({"type": "string", "pattern": f"^{PRICE_MODEL_RE.pattern}$"}),
]
