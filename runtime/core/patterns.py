"""``LazyPattern``: a module-level regular expression compiled the first time it is used.

Compiling a pattern costs 0.05-0.5 ms, and a bundle imports a few dozen modules that each
compile theirs at import: ids, names and file formats that its first answer never checks. A
``LazyPattern`` keeps the source and flags and compiles on the first ``match``, ``fullmatch``,
``search``, ``sub``, ``findall`` or ``finditer`` (``pattern`` reads the source without
compiling). Two threads using it first may both compile: the same pattern, either kept.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Iterator
from typing import Any

__all__ = ["LazyPattern"]


class LazyPattern:
    """``re.compile(source, flags)``, made on first use; the methods of ``re.Pattern[str]``
    this runtime calls."""

    __slots__ = ("pattern", "_flags", "_compiled")

    def __init__(self, pattern: str, flags: int = 0) -> None:
        self.pattern = pattern
        self._flags = flags
        self._compiled: re.Pattern[str] | None = None

    def compiled(self) -> re.Pattern[str]:
        found = self._compiled
        if found is None:
            found = self._compiled = re.compile(self.pattern, self._flags)
        return found

    def match(self, string: str, pos: int = 0, endpos: int = sys.maxsize) -> re.Match[str] | None:
        return self.compiled().match(string, pos, endpos)

    def fullmatch(
        self, string: str, pos: int = 0, endpos: int = sys.maxsize
    ) -> re.Match[str] | None:
        return self.compiled().fullmatch(string, pos, endpos)

    def search(self, string: str, pos: int = 0, endpos: int = sys.maxsize) -> re.Match[str] | None:
        return self.compiled().search(string, pos, endpos)

    def sub(self, repl: str | Callable[[re.Match[str]], str], string: str, count: int = 0) -> str:
        return self.compiled().sub(repl, string, count)

    def findall(self, string: str, pos: int = 0, endpos: int = sys.maxsize) -> list[Any]:
        return self.compiled().findall(string, pos, endpos)

    def finditer(
        self, string: str, pos: int = 0, endpos: int = sys.maxsize
    ) -> Iterator[re.Match[str]]:
        return self.compiled().finditer(string, pos, endpos)

    def __repr__(self) -> str:
        return f"LazyPattern({self.pattern!r}, {self._flags!r})"
