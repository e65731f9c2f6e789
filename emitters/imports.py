"""Imports as data: templates ask for a symbol, the header renders the sorted import block.

A template never writes an import line. It calls
``imports.use("specwire.runtime.bundle", "wire_memory")``, which records the need and returns
the name to use in code. The header then renders the deduplicated ``from module import name``
lines: standard library first, then everything else, each group sorted by module, names sorted
within a line.
"""

from __future__ import annotations

import sys


class ImportConflictError(ValueError):
    """Two modules were asked for the same local name."""


class ImportRegistry:
    def __init__(self) -> None:
        self._by_name: dict[str, str] = {}

    def use(self, module: str, name: str) -> str:
        """Record ``from module import name`` and return the name to reference in code."""
        if not module or not all(part.isidentifier() for part in module.split(".")):
            raise ValueError(f"not a module path: {module!r}")
        if not name.isidentifier():
            raise ValueError(f"not an identifier: {name!r}")
        known = self._by_name.get(name)
        if known is not None and known != module:
            raise ImportConflictError(f"{name!r} requested from both {known!r} and {module!r}")
        self._by_name[name] = module
        return name

    @property
    def modules(self) -> tuple[str, ...]:
        return tuple(sorted(set(self._by_name.values())))

    def names_from(self, module: str) -> tuple[str, ...]:
        return tuple(sorted(n for n, m in self._by_name.items() if m == module))

    def groups(self, *, without: str | None = None) -> tuple[tuple[str, ...], ...]:
        """Import lines, grouped (stdlib, then the rest), leaving out module ``without``; empty
        groups are left out."""
        stdlib: list[str] = []
        other: list[str] = []
        for module in self.modules:
            if module == without:
                continue
            line = f"from {module} import {', '.join(self.names_from(module))}"
            top = module.split(".")[0]
            (stdlib if top in sys.stdlib_module_names else other).append(line)
        return tuple(tuple(group) for group in (stdlib, other) if group)

    def render(self, *, without: str | None = None) -> str:
        """The import block (leaving out module ``without``): groups separated by one blank
        line, no trailing newline."""
        return "\n\n".join("\n".join(group) for group in self.groups(without=without))
