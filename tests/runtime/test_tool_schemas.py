"""Tool schemas ship as data, so listing a session's tools builds no validator."""

from __future__ import annotations

import subprocess
import sys

from runtime.tool_schemas import render
from runtime.tools import SCHEMAS_FILE

REGENERATE = ".venv/bin/python -m runtime.tool_schemas --write"


def test_the_shipped_schemas_are_up_to_date() -> None:
    assert SCHEMAS_FILE.read_text(encoding="utf-8") == render(), (
        f"runtime/tool_schemas.json is stale: run `{REGENERATE}` and commit it"
    )


def test_listing_the_tools_builds_no_validator_until_a_call() -> None:
    probe = (
        "from pathlib import Path\n"
        "import tempfile\n"
        "from runtime.builtin_tools import builtin_catalog, ReadInput\n"
        "from runtime.continuity.inputs import PlanUpdateInput\n"
        "from runtime.fragment import MemoryWiringFragment\n"
        "from runtime.tools import ToolContext\n"
        "from runtime.wiring import MemoryDeps, wire_memory\n"
        "cwd = Path(tempfile.mkdtemp())\n"
        "catalog = builtin_catalog(['read'], cwd)\n"
        "wire_memory({'spec_name': 's', 'memory': {}, 'continuity': {}},"
        " MemoryDeps(catalog=catalog, cwd=cwd))\n"
        "schemas = [t.input_schema() for t in catalog.list()]\n"
        "print(len(schemas), ReadInput.__pydantic_complete__,"
        " PlanUpdateInput.__pydantic_complete__)\n"
        "catalog.get('read').invoke({'path': 'x'}, ToolContext('s', 't'))\n"
        "print(ReadInput.__pydantic_complete__)\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    listed, after_call = done.stdout.splitlines()
    count, read_built, plan_built = listed.split()
    assert int(count) > 10
    assert (read_built, plan_built) == ("False", "False")
    assert after_call == "True"
