"""The JSON Schema of the spec language (canonical camelCase keys), for editors."""

from __future__ import annotations

from typing import Any

from pydantic import TypeAdapter

from ir.source import SpecSource

SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"


def spec_json_schema() -> dict[str, Any]:
    """A fresh schema dict; dump it with sorted keys for stable bytes."""
    schema = TypeAdapter(SpecSource).json_schema(by_alias=True, mode="validation")
    for definition in schema.get("$defs", {}).values():
        _allow_continuity_flag(definition)
    return {
        "$schema": SCHEMA_DIALECT,
        "title": "specwire spec",
        "description": "A specwire agent spec: one of the cli, channel, managed, research and "
        "crew targets. snake_case spellings of the camelCase keys are also accepted.",
        **schema,
    }


def _allow_continuity_flag(definition: dict[str, Any]) -> None:
    """``continuity`` is ``true``, ``false`` or a block (flags become blocks when loading)."""
    prop = definition.get("properties", {}).get("continuity")
    if prop is None:
        return
    block = {"$ref": "#/$defs/ContinuitySource"}
    prop.pop("anyOf", None)
    prop["anyOf"] = [{"type": "boolean"}, block, {"type": "null"}]
