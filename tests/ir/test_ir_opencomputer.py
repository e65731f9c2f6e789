"""``memory.protocol`` and ``memory.tools``: the located checks, one row each, and what a valid
OpenComputer memory block lowers to."""

from __future__ import annotations

import json

import pytest

from specwire.ir import SpecError, load_spec_text
from specwire.ir.lowering import lower

# lines 1-4
HEAD = "name: s\ntarget: cli\nagent: {model: claude-sonnet-4-5, instructions: i}\nmemory:\n"
OC = "  backend: http\n  protocol: opencomputer\n  url: $MEMORY_URL\n  token: $MEMORY_TOKEN\n"
TOOL = "    - name: remember\n      description: Save a fact.\n      access: write\n"


def _issues(text: str) -> list[str]:
    with pytest.raises(SpecError) as caught:
        load_spec_text(text, "spec.yaml")
    return [line.removeprefix("spec.yaml:") for line in str(caught.value).splitlines()]


BAD: list[tuple[str, str, list[str]]] = [
    (
        "protocol-without-http",
        HEAD + "  protocol: opencomputer\n",
        [
            "5:3: memory.protocol: `protocol` chooses the http backend's wire, but the backend "
            'is "file": remove `protocol` or set `backend: http`'
        ],
    ),
    (
        "protocol-on-a-postgres-provider",
        HEAD + "  providers:\n    - {name: main, backend: postgres, dsn: $DATABASE_URL, "
        "protocol: opencomputer}\n",
        [
            "6:59: memory.providers[0].protocol: `protocol` is a setting of the http backend, "
            'but this provider\'s backend is "postgres"'
        ],
    ),
    (
        "tools-without-opencomputer",
        HEAD
        + "  backend: http\n  url: $MEMORY_URL\n  token: $MEMORY_TOKEN\n  tools:\n"
        + TOOL
        + "      input: {type: object}\n",
        [
            "8:3: memory.tools: `tools` are the tools of an OpenComputer memory endpoint: they "
            "need `backend: http` and `protocol: opencomputer`"
        ],
    ),
    (
        "tool-input-not-an-object",
        HEAD + OC + "  tools:\n" + TOOL + "      input: {type: array}\n",
        [
            "13:14: memory.tools[0].input: a memory tool's input must be a JSON Schema with "
            'type "object"'
        ],
    ),
    (
        "tool-input-with-ref",
        HEAD
        + OC
        + "  tools:\n"
        + TOOL
        + "      input: {type: object, properties: {a: {$ref: '#/x'}}}\n",
        ["13:41: memory.tools[0].input.properties.a.$ref: a memory tool's input cannot use $ref"],
    ),
    (
        "tool-input-declares-memory",
        HEAD
        + OC
        + "  tools:\n"
        + TOOL
        + "      input: {type: object, properties: {memory: {type: string}}}\n",
        [
            "13:41: memory.tools[0].input.properties.memory: `memory` is reserved: the host "
            "adds it to name the memory resource, so a tool's input cannot declare it"
        ],
    ),
    (
        "tool-input-requires-memory",
        HEAD + OC + "  tools:\n" + TOOL + "      input: {type: object, required: [memory]}\n",
        [
            "13:29: memory.tools[0].input.required: `memory` is reserved: the host adds it to "
            "name the memory resource, so a tool's input cannot declare it"
        ],
    ),
    (
        "tool-input-unenforced-keyword",
        HEAD + OC + "  tools:\n" + TOOL + "      input: {type: object, propertyNames: {}}\n",
        [
            '13:29: memory.tools[0].input.propertyNames: the JSON Schema keyword "propertyNames" '
            "is not enforced on memory tool arguments: remove it (the keywords allowed are "
            "listed in docs/opencomputer.md)"
        ],
    ),
    (
        "duplicate-tool-names",
        HEAD
        + OC
        + "  tools:\n"
        + TOOL
        + "      input: {type: object}\n"
        + TOOL
        + "      input: {type: object}\n",
        ['14:13: memory.tools[1].name: duplicate memory tool "remember"'],
    ),
    (
        "too-many-tools",
        HEAD
        + OC
        + "  tools:\n"
        + "".join(
            f"    - {{name: t{n}, description: d, access: read, input: {{type: object}}}}\n"
            for n in range(9)
        ),
        ["18:7: memory.tools[8]: an OpenComputer memory endpoint declares at most 8 tools"],
    ),
    (
        "tiers-on-opencomputer",
        HEAD + OC + "  tiers: true\n",
        [
            "9:3: memory.tiers: `tiers` needs fact writes, and an OpenComputer memory endpoint "
            "takes none (the tier notes are facts written through retain): remove it, or use "
            "`protocol: specwire`"
        ],
    ),
]


@pytest.mark.parametrize(("text", "expected"), [row[1:] for row in BAD], ids=[r[0] for r in BAD])
def test_a_bad_opencomputer_block_is_refused_where_it_is_wrong(
    text: str, expected: list[str]
) -> None:
    assert _issues(text) == expected


def test_a_valid_block_lowers_its_tools_as_canonical_json() -> None:
    text = (
        HEAD
        + OC
        + "  tools:\n"
        + TOOL
        + "      idempotent: true\n"
        + "      input:\n"
        + "        type: object\n"
        + "        properties: {fact: {type: string, maxLength: 2000}}\n"
        + "        required: [fact]\n"
        + "        additionalProperties: false\n"
    )
    memory = lower(load_spec_text(text, "spec.yaml")).memory
    assert memory is not None and memory.protocol == "opencomputer"
    assert memory.tools is not None and len(memory.tools) == 1
    tool = memory.tools[0]
    assert (tool.name, tool.access, tool.idempotent) == ("remember", "write", True)
    assert json.loads(tool.input_schema) == {
        "type": "object",
        "properties": {"fact": {"type": "string", "maxLength": 2000}},
        "required": ["fact"],
        "additionalProperties": False,
    }
    assert tool.input_schema == json.dumps(
        json.loads(tool.input_schema), sort_keys=True, separators=(",", ":")
    )
