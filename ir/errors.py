"""What a failed load reports: located issues, gathered into one exception."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from specwire.ir.values import one_line

ROOT_KEY = "(root)"


@dataclass(frozen=True, order=True)
class Mark:
    """A 1-based position in the spec text."""

    line: int
    col: int


ROOT_MARK = Mark(1, 1)


@dataclass(frozen=True)
class SpecIssue:
    """One problem in a spec: ``support.yaml:12:5: memory.recallK: must be between 1 and 50``."""

    path: str
    line: int
    col: int
    key: str
    message: str

    def __str__(self) -> str:
        # One issue, one line: nothing the user wrote may break it (values are quoted already;
        # this also covers the file name and any text a library put into a message).
        return one_line(f"{self.path}:{self.line}:{self.col}: {self.key}: {self.message}")


def sort_issues(issues: Iterable[SpecIssue]) -> list[SpecIssue]:
    """Issues by position (stable for ties), each reported once."""
    unique = list(dict.fromkeys(issues))
    return sorted(unique, key=lambda issue: (issue.line, issue.col))


class SpecError(Exception):
    """A spec could not be loaded; ``issues`` says every problem found, sorted by position."""

    def __init__(self, issues: Iterable[SpecIssue]) -> None:
        self.issues: list[SpecIssue] = sort_issues(issues)
        super().__init__("\n".join(str(issue) for issue in self.issues))

    def __str__(self) -> str:
        return "\n".join(str(issue) for issue in self.issues)
