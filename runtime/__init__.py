"""specwire runtime. Generated bundles import from ``specwire.runtime.bundle`` only.

Importing this package stays cheap: no compiler dependency (jinja2, libcst, black, ruamel) is
ever on its import path, and the public names below load on first use, so the compiler's
``import runtime.core.fragment`` does not pull in the stores.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from specwire.runtime.core.fragment import MemoryWiringFragment
    from specwire.runtime.wiring import MemoryDeps, WiredMemory, wire_continuity, wire_memory

_EXPORTS = {
    "MemoryWiringFragment": "specwire.runtime.core.fragment",
    "MemoryDeps": "specwire.runtime.wiring",
    "WiredMemory": "specwire.runtime.wiring",
    "wire_continuity": "specwire.runtime.wiring",
    "wire_memory": "specwire.runtime.wiring",
}

__all__ = [
    "MemoryDeps",
    "MemoryWiringFragment",
    "WiredMemory",
    "wire_continuity",
    "wire_memory",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'runtime' has no attribute {name!r}")
    return getattr(import_module(module), name)
