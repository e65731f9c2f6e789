"""Which keys each level of a spec accepts, derived from the source models.

A ``KeyTable`` maps every accepted spelling (the canonical camelCase key and its snake_case
alias) to the canonical key, and says what shape each key's value has so the normalizer knows
how to walk into it.
"""

from __future__ import annotations

import types
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from typing import Annotated, Any, Literal, Union, get_args, get_origin

from pydantic import BaseModel
from pydantic.alias_generators import to_camel, to_snake

from specwire.ir.source import NullAsEmpty


@dataclass(frozen=True)
class ModelShape:
    model: type[BaseModel]


@dataclass(frozen=True)
class MapShape:
    """A mapping whose keys the user chooses (channel names, role names, setting names)."""

    value: Any


@dataclass(frozen=True)
class ListShape:
    item: Any


@dataclass(frozen=True)
class LeafShape:
    annotation: Any


Shape = ModelShape | MapShape | ListShape | LeafShape


@dataclass(frozen=True)
class KeyInfo:
    canonical: str
    annotation: Any
    null_as_empty: bool
    required: bool


@dataclass(frozen=True)
class KeyTable:
    keys: dict[str, KeyInfo]  # canonical key → info
    spellings: dict[str, str]  # every accepted spelling → canonical key


@cache
def table_for(model: type[BaseModel]) -> KeyTable:
    keys: dict[str, KeyInfo] = {}
    for name, info in model.model_fields.items():
        canonical = info.alias or name
        keys[canonical] = KeyInfo(
            canonical=canonical,
            annotation=info.annotation,
            null_as_empty=any(isinstance(item, NullAsEmpty) for item in info.metadata),
            required=info.is_required(),
        )
    return KeyTable(keys, _spellings(keys))


def merged_table(models: Iterable[type[BaseModel]]) -> KeyTable:
    """Every key any of ``models`` accepts (used when the target is unknown)."""
    keys: dict[str, KeyInfo] = {}
    for model in models:
        for canonical, info in table_for(model).keys.items():
            keys.setdefault(canonical, info)
    return KeyTable(keys, _spellings(keys))


def _spellings(keys: dict[str, KeyInfo]) -> dict[str, str]:
    spellings = {canonical: canonical for canonical in keys}
    for canonical in keys:
        spellings.setdefault(to_snake(canonical), canonical)
        if "_" in canonical:  # a key CrewHaus spells in snake_case (`budget_usd`)
            spellings.setdefault(to_camel(canonical), canonical)
    return spellings


def shape_of(annotation: Any) -> Shape:
    """How to walk a value of this annotation (``X | None`` walks as ``X``)."""
    annotation = _strip(annotation)
    origin = get_origin(annotation)
    if origin in (Union, types.UnionType):
        members = [_strip(arg) for arg in get_args(annotation) if arg is not type(None)]
        if len(members) == 1:
            return shape_of(members[0])
        return LeafShape(annotation)
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return ModelShape(annotation)
    if origin is dict:
        return MapShape(get_args(annotation)[1])
    if origin in (list, tuple):
        return ListShape(get_args(annotation)[0])
    return LeafShape(annotation)


def describe(annotation: Any) -> str:
    """What a value of this annotation looks like, for ``expected …`` messages."""
    shape = shape_of(annotation)
    if isinstance(shape, ModelShape | MapShape):
        return "a mapping"
    if isinstance(shape, ListShape):
        return "a list"
    leaf = _strip(shape.annotation)
    if get_origin(leaf) is Literal:
        return "one of " + ", ".join(str(arg) for arg in get_args(leaf))
    if leaf is bool:
        return "true or false"
    if leaf is int:
        return "an integer"
    if leaf is str:
        return "a string"
    return "a value"


def _strip(annotation: Any) -> Any:
    while get_origin(annotation) is Annotated:
        annotation = get_args(annotation)[0]
    return annotation
