"""The JSON Schema of the spec language (canonical camelCase keys), for editors."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, TypeAdapter

from specwire.ir.keys import ListShape, MapShape, ModelShape, shape_of, table_for
from specwire.ir.source import MEMORY_SCOPES, SOURCE_MODELS, MemorySource, SpecSource

SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"
_NULL = {"type": "null"}


def spec_json_schema() -> dict[str, Any]:
    """A fresh schema dict; dump it with sorted keys for stable bytes."""
    schema = TypeAdapter(SpecSource).json_schema(by_alias=True, mode="validation")
    models = _models_by_name(SOURCE_MODELS.values())
    for name, definition in schema.get("$defs", {}).items():
        model = models.get(name)
        if model is not None:
            _tidy(definition, model)
    return {
        "$schema": SCHEMA_DIALECT,
        "title": "specwire spec",
        "description": "A specwire agent spec: one of the cli, channel, managed, research and "
        "crew targets. snake_case spellings of the camelCase keys are also accepted.",
        **schema,
    }


def _tidy(definition: dict[str, Any], model: type[BaseModel]) -> None:
    """Say what the loader accepts: ``null`` only where a key without a value means ``{}``,
    ``true``/``false`` for ``continuity``, no generated titles or ``null`` defaults."""
    table = table_for(model)
    for key, prop in definition.get("properties", {}).items():
        prop.pop("title", None)
        if "default" in prop and prop["default"] is None:
            del prop["default"]
        info = table.keys.get(key)
        branches = prop.get("anyOf")
        if info is None or not isinstance(branches, list) or _NULL not in branches:
            continue
        if key == "continuity":
            branches.insert(0, {"type": "boolean"})
        if key == "scope" and model is MemorySource:  # `scope: user` is `scope: {default: user}`
            branches.insert(0, {"enum": list(MEMORY_SCOPES)})
        if not info.null_as_empty:
            branches.remove(_NULL)
        if len(branches) == 1:
            del prop["anyOf"]
            prop.update(branches[0])


def _models_by_name(roots: Any) -> dict[str, type[BaseModel]]:
    found: dict[str, type[BaseModel]] = {}
    pending: list[type[BaseModel]] = list(roots)
    while pending:
        model = pending.pop()
        if model.__name__ in found:
            continue
        found[model.__name__] = model
        for info in table_for(model).keys.values():
            nested = _nested_model(info.annotation)
            if nested is not None:
                pending.append(nested)
    return found


def _nested_model(annotation: Any) -> type[BaseModel] | None:
    shape = shape_of(annotation)
    while isinstance(shape, MapShape | ListShape):
        shape = shape_of(shape.value if isinstance(shape, MapShape) else shape.item)
    return shape.model if isinstance(shape, ModelShape) else None
