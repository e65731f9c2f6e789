"""Where each key and value of a spec sits, and turning a location into a ``SpecIssue``."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from specwire.ir.errors import ROOT_KEY, ROOT_MARK, Mark, SpecIssue
from specwire.ir.values import quote

Loc = tuple[str | int, ...]
"""A canonical path into the spec: ``("memory", "recallK")``, ``("tenants", 0, "id")``."""


@dataclass(frozen=True)
class Located:
    display: str  # the dotted path as the user spelt it: ``memory.recall_k``, ``tenants[0].id``
    key: Mark
    value: Mark


_PLAIN_KEY = re.compile(r"[A-Za-z0-9_$-]+")


def join_display(parent: str, part: str | int) -> str:
    """``parent.part`` / ``parent[3]``; keys that are not plain words are shown quoted."""
    if isinstance(part, int):
        return f"{parent}[{part}]"
    shown = part if _PLAIN_KEY.fullmatch(part) else quote(part)
    return f"{parent}.{shown}" if parent else shown


@dataclass
class Locator:
    """Builds issues for locations, falling back to the nearest known ancestor."""

    path: str
    positions: dict[Loc, Located] = field(default_factory=dict)

    def display(self, loc: Loc) -> str:
        known, rest = self._nearest(loc)
        text = self.positions[known].display if known else ""
        for part in rest:
            text = join_display(text, part)
        return text or ROOT_KEY

    def key_mark(self, loc: Loc) -> Mark:
        known, rest = self._nearest(loc)
        if not known:
            return ROOT_MARK
        located = self.positions[known]
        return located.key if not rest else located.value

    def value_mark(self, loc: Loc) -> Mark:
        known, _ = self._nearest(loc)
        return self.positions[known].value if known else ROOT_MARK

    def at_value(self, loc: Loc, message: str) -> SpecIssue:
        return self._issue(self.value_mark(loc), self.display(loc), message)

    def at_key(self, loc: Loc, message: str) -> SpecIssue:
        return self._issue(self.key_mark(loc), self.display(loc), message)

    def at_mark(self, mark: Mark, display: str, message: str) -> SpecIssue:
        return self._issue(mark, display or ROOT_KEY, message)

    def _issue(self, mark: Mark, display: str, message: str) -> SpecIssue:
        return SpecIssue(self.path, mark.line, mark.col, display, message)

    def _nearest(self, loc: Loc) -> tuple[Loc, Loc]:
        for cut in range(len(loc), 0, -1):
            if loc[:cut] in self.positions:
                return loc[:cut], loc[cut:]
        return (), loc
