"""specwire's front end: load a spec (positions kept), resolve it to the IR, lower it to the
memory wiring fragment.

``ir`` imports only ``runtime.fragment`` from the runtime (the compiler ↔ runtime contract).
"""

from __future__ import annotations

from ir.errors import SpecError, SpecIssue
from ir.load import load_spec, load_spec_text
from ir.lower import lower
from ir.model import TARGETS, IrSpec, Target
from ir.schema import spec_json_schema

__all__ = [
    "TARGETS",
    "IrSpec",
    "SpecError",
    "SpecIssue",
    "Target",
    "load_spec",
    "load_spec_text",
    "lower",
    "spec_json_schema",
]
