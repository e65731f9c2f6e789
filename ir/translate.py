"""Pydantic validation errors → located ``SpecIssue``s with the spec language's messages."""

from __future__ import annotations

import re
from collections.abc import Iterable

from pydantic import ValidationError
from pydantic_core import ErrorDetails

from specwire.ir.errors import SpecIssue
from specwire.ir.fields import CUSTOM_ERROR
from specwire.ir.positions import Loc, Locator
from specwire.ir.values import got

_EXPECTED: dict[str, str] = {
    "int_type": "an integer",
    "int_parsing": "an integer",
    "bool_type": "true or false",
    "bool_parsing": "true or false",
    "string_type": "a string",
    "float_type": "a number",
    "dict_type": "a mapping",
    "model_type": "a mapping",
    "model_attributes_type": "a mapping",
    "list_type": "a list",
    "tuple_type": "a list",
}


def translate(
    error: ValidationError,
    locator: Locator,
    explained: set[Loc],
    tag: str | None,
    refused: set[Loc],
) -> list[SpecIssue]:
    """``refused``: values already reported (errors inside them are not reported again)."""
    return list(_issues(error.errors(include_url=False), locator, explained, tag, refused))


def _issues(
    details: Iterable[ErrorDetails],
    locator: Locator,
    explained: set[Loc],
    tag: str | None,
    refused: set[Loc],
) -> Iterable[SpecIssue]:
    for detail in details:
        loc: Loc = tuple(detail["loc"])
        if tag is not None and loc[:1] == (tag,):
            loc = loc[1:]  # the discriminated union names its member first
        if any(loc[:cut] in refused for cut in range(1, len(loc) + 1)):
            continue
        kind = detail["type"]
        if kind == "missing":
            if loc in explained:
                continue
            parent = loc[:-1]
            yield locator.at_key(parent, f'missing required key "{loc[-1]}"')
        elif "[key]" in loc:
            key_loc = loc[: loc.index("[key]")]
            yield locator.at_key(key_loc, message_for(detail))
        else:
            yield locator.at_value(loc, message_for(detail))


def message_for(detail: ErrorDetails) -> str:
    kind = detail["type"]
    value = detail.get("input")
    if kind == CUSTOM_ERROR:
        return detail["msg"]
    if kind in _EXPECTED:
        return f"expected {_EXPECTED[kind]} {got(value)}"
    if kind == "literal_error":
        expected = str((detail.get("ctx") or {}).get("expected", ""))
        options = re.findall(r"'([^']*)'", expected) or [expected]
        return f"expected one of {', '.join(options)} {got(value)}"
    if kind == "extra_forbidden":
        loc = detail["loc"]
        return f'unknown key "{loc[-1]}"' if loc else "unknown key"
    message = detail["msg"]
    return f"{message[:1].lower()}{message[1:]} {got(value)}"
