"""Regenerates ``tools/schemas.json``: the JSON schema of every tool input model, shipped so a
session lists its tools without building a validator (see ``runtime.core.tool_types.ToolInput``).

    python -m specwire.runtime.tools.schemas --write     # after changing a tool's input model

A test fails when the shipped file differs from what this produces.
"""

from __future__ import annotations

import importlib
import json
import sys
from typing import Any

from specwire.runtime.core.tool_input import ToolInput
from specwire.runtime.core.tool_types import SCHEMAS_FILE, schema_key

# Every module that defines tool input models.
INPUT_MODULES = (
    "specwire.runtime.tools.builtin_inputs",
    "specwire.runtime.continuity.inputs",
    "specwire.runtime.documents.inputs",
    "specwire.runtime.facts.inputs",
    "specwire.runtime.facts.tiers.tools",
    "specwire.runtime.hosts.delegation",
    "specwire.runtime.learning.inputs",
    "specwire.runtime.loop.skill_input",
    "specwire.runtime.tools.fetch",
    "specwire.runtime.tools.shell.inputs",
    "specwire.runtime.wiki.inputs",
)


def _subclasses(base: type[ToolInput]) -> list[type[ToolInput]]:
    found: list[type[ToolInput]] = []
    for cls in base.__subclasses__():
        found.append(cls)
        found.extend(_subclasses(cls))
    return found


def generate() -> dict[str, Any]:
    for module in INPUT_MODULES:
        importlib.import_module(module)
    # Only the models a module defines by name: a class built at run time (the scoped Remember
    # input, made per set of scopes) depends on what ran before, and ships nothing.
    models = {
        schema_key(cls): cls
        for cls in _subclasses(ToolInput)
        if getattr(sys.modules.get(cls.__module__), cls.__qualname__, None) is cls
    }
    return {key: models[key].model_json_schema() for key in sorted(models)}


def render() -> str:
    return json.dumps(generate(), ensure_ascii=False, indent=1, sort_keys=True) + "\n"


def main(argv: list[str]) -> int:
    text = render()
    if argv[1:] == ["--write"]:
        SCHEMAS_FILE.write_text(text, encoding="utf-8")
        return 0
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
