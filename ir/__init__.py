"""specwire's front end: load a spec (positions kept), resolve it to the IR, lower it to the
memory wiring fragment.

``ir`` imports only ``runtime.core.fragment`` from the runtime (the compiler ↔ runtime contract).

The names below are imported on first use (PEP 562), so importing a light submodule
(``ir.limits``, ``ir.errors``) does not build the pydantic models: ``codegen --help`` and a
build served from the cache never pay for them.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from specwire.ir.errors import SpecError, SpecIssue
    from specwire.ir.load import load_spec, load_spec_text
    from specwire.ir.lowering import lower
    from specwire.ir.model import TARGETS, IrSpec, Target
    from specwire.ir.schema import spec_json_schema

_EXPORTS = {
    "TARGETS": "specwire.ir.model",
    "IrSpec": "specwire.ir.model",
    "Target": "specwire.ir.model",
    "SpecError": "specwire.ir.errors",
    "SpecIssue": "specwire.ir.errors",
    "load_spec": "specwire.ir.load",
    "load_spec_text": "specwire.ir.load",
    "lower": "specwire.ir.lowering",
    "spec_json_schema": "specwire.ir.schema",
}

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


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'ir' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
