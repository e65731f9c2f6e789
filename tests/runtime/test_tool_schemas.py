"""Tool schemas ship as data, so listing a session's tools builds no validator."""

from __future__ import annotations

import subprocess
import sys

from specwire.runtime.core.tool_types import SCHEMAS_FILE
from specwire.runtime.tools.schemas import render

REGENERATE = ".venv/bin/python -m specwire.runtime.tools.schemas --write"


def test_the_shipped_schemas_are_up_to_date() -> None:
    assert SCHEMAS_FILE.read_text(encoding="utf-8") == render(), (
        f"runtime/tools/schemas.json is stale: run `{REGENERATE}` and commit it"
    )


def test_listing_the_tools_builds_no_validator_until_a_call() -> None:
    probe = (
        "from pathlib import Path\n"
        "import tempfile\n"
        "from specwire.runtime.tools.builtin import builtin_catalog\n"
        "from specwire.runtime.tools.builtin_inputs import ReadInput\n"
        "from specwire.runtime.continuity.inputs import PlanUpdateInput\n"
        "from specwire.runtime.core.fragment import MemoryWiringFragment\n"
        "from specwire.runtime.core.tool_types import ToolContext\n"
        "from specwire.runtime.wiring import MemoryDeps, wire_memory\n"
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
