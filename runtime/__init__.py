"""specwire runtime: what generated bundles import.

Importing this package stays cheap: no compiler dependency (jinja2, libcst, black, ruamel) is
ever on its import path.
"""

from runtime.fragment import MemoryWiringFragment
from runtime.wiring import MemoryDeps, WiredMemory, wire_memory

__all__ = ["MemoryDeps", "MemoryWiringFragment", "WiredMemory", "wire_memory"]
