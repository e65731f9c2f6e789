"""The spec JSON Schema for editors: deterministic, camelCase, strict about keys."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from specwire.ir import TARGETS, SpecError, load_spec_text, spec_json_schema


def dumped() -> str:
    return json.dumps(spec_json_schema(), sort_keys=True, indent=2)


def definition(name: str) -> dict[str, Any]:
    found: dict[str, Any] = spec_json_schema()["$defs"][name]
    return found


def test_schema_is_deterministic_and_fresh() -> None:
    first = spec_json_schema()
    first["$defs"].clear()  # mutating one copy must not leak into the next
    assert dumped() == dumped()
    assert spec_json_schema()["$defs"]


def test_schema_discriminates_on_target() -> None:
    schema = spec_json_schema()
    assert schema["$schema"].startswith("https://json-schema.org/")
    assert schema["discriminator"]["propertyName"] == "target"
    assert set(schema["discriminator"]["mapping"]) == set(TARGETS)


def test_every_block_forbids_unknown_keys() -> None:
    for name, block in spec_json_schema()["$defs"].items():
        assert block.get("additionalProperties") is False, name


def test_keys_are_camel_case() -> None:
    memory = definition("MemorySource")["properties"]
    assert {"autoRecall", "recallK", "autoCapture", "autoCaptureThreshold"} <= set(memory)
    assert "recall_k" not in memory
    assert {"branchingFactor", "maxDurationMs"} <= set(definition("ResearchSource")["properties"])


def test_constraints_are_visible_to_editors() -> None:
    memory = definition("MemorySource")["properties"]
    assert memory["recallK"] == {"type": "integer", "minimum": 1, "maximum": 50}
    assert memory["backend"] == {"type": "string", "enum": ["file", "http", "postgres", "thredz"]}
    assert memory["dsn"]["pattern"] == "^\\$[A-Z][A-Z0-9_]*$"
    assert memory["ttl"]["pattern"].startswith("^")
    continuity = definition("CliSource")["properties"]["continuity"]
    assert {"type": "boolean"} in continuity["anyOf"]
    assert definition("ManagedSource")["properties"]["tenants"]["minItems"] == 1
    proof = definition("ContinuitySource")["properties"]["proof"]
    assert proof["enum"] == ["ladder", "require", "off"]
    assert "agent" not in definition("CrewSource")["properties"]


@pytest.mark.parametrize(
    "name",
    ["a", "a b", ".a", "a.", "-", "x:y", "..", ".", " ", " a", "a ", "a/b", "", "é"],
)
def test_spec_name_pattern_agrees_with_the_loader(name: str) -> None:
    pattern = definition("CliSource")["properties"]["name"]["pattern"]
    text = f"name: {json.dumps(name)}\ntarget: cli\nagent: {{model: scripted, instructions: i}}\n"
    try:
        load_spec_text(text, "spec.yaml")
        loads = True
    except SpecError:
        loads = False
    assert (re.fullmatch(pattern, name, re.ASCII) is not None) == loads


def test_model_ids_and_managed_tools_are_described() -> None:
    model = definition("AgentSource")["properties"]["model"]
    assert "$UPPER_SNAKE" in model["description"]
    assert definition("CrewSource")["properties"]["model"] == model
    tools = definition("ManagedSource")["properties"]["tools"]["items"]
    tier_tools = [
        "memory.read",
        "memory.write",
        "memory.search",
        "memory.append_daily",
        "memory_read",
        "memory_write",
        "memory_search",
        "memory_append_daily",
    ]
    assert tools == {"type": "string", "enum": ["grep", "ls", "read", "write", *tier_tools]}
    assert "bash" in definition("CliSource")["properties"]["tools"]["items"]["enum"]
