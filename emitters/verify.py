"""Verification of generated files with libcst (and a text scan for markdown).

A Python file must parse. With memory wired it must contain exactly one ``wire_memory`` call
site. A memoryless file must contain no ``wire_memory`` call, no import of a memory module, no
identifier (names, attribute names, import names, parameters) and no comment that speaks of
memory, continuity, fragments or wiring. String literals are exempt: they carry the user's own
text (the instructions may well mention memory). A failure is a template bug, reported as a
``VerificationError`` naming the file, the line and the rule.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import NoReturn

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

WIRE_CALL = "wire_memory"
# What a memoryless bundle must never name (identifiers, comments, import modules).
MEMORY_WORDS = re.compile(r"memory|continuity|fragment|wire_|wiring|wired", re.IGNORECASE)
# The same, for prose: words, so `SPECWIRE_MODEL` is not read as `wire_`.
MEMORY_PROSE = re.compile(
    r"memor(?:y|ies)|continuity|fragment|wire_memory|\bwir(?:ing|ed)\b|\brecall|\bremember",
    re.IGNORECASE,
)


class VerificationError(RuntimeError):
    """Generated code broke a verification rule: an internal error (a template bug)."""


@dataclass(frozen=True)
class Finding:
    line: int
    message: str


class _Scanner(cst.CSTVisitor):
    METADATA_DEPENDENCIES = (PositionProvider,)

    def __init__(self, exempt_comments: frozenset[str], *, lines: bool) -> None:
        super().__init__()
        self.exempt_comments = exempt_comments
        self.lines = lines
        self.wire_aliases: set[str] = {WIRE_CALL}
        self.wire_calls: list[int] = []
        self.memory_names: list[Finding] = []
        self.memory_imports: list[Finding] = []
        self.memory_comments: list[Finding] = []

    def _line(self, node: cst.CSTNode) -> int:
        return self.get_metadata(PositionProvider, node).start.line if self.lines else 0

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        module = _dotted(node.module) if node.module is not None else ""
        if MEMORY_WORDS.search(module):
            self.memory_imports.append(Finding(self._line(node), f"imports from {module}"))
        if isinstance(node.names, cst.ImportStar):
            return
        for alias in node.names:
            if _dotted(alias.name) == WIRE_CALL:
                self.wire_aliases.add(_alias_target(alias))

    def visit_Import(self, node: cst.Import) -> None:
        for alias in node.names:
            module = _dotted(alias.name)
            if MEMORY_WORDS.search(module):
                self.memory_imports.append(Finding(self._line(node), f"imports {module}"))

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if (isinstance(func, cst.Name) and func.value in self.wire_aliases) or (
            isinstance(func, cst.Attribute) and func.attr.value == WIRE_CALL
        ):
            self.wire_calls.append(self._line(node))

    def visit_Name(self, node: cst.Name) -> None:
        if MEMORY_WORDS.search(node.value):
            self.memory_names.append(Finding(self._line(node), f"names {node.value}"))

    def visit_Comment(self, node: cst.Comment) -> None:
        if node.value in self.exempt_comments:
            return
        if MEMORY_WORDS.search(node.value):
            self.memory_comments.append(Finding(self._line(node), f"comment {node.value!r}"))


def _dotted(node: cst.BaseExpression) -> str:
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        return f"{_dotted(node.value)}.{node.attr.value}"
    return ""


def _alias_target(alias: cst.ImportAlias) -> str:
    if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
        return alias.asname.name.value
    return _dotted(alias.name)


def count_wire_calls(source: str) -> int:
    """The number of ``wire_memory`` call sites in ``source`` (which must parse)."""
    return len(_scan(source, "<source>", frozenset(), lines=False).wire_calls)


def verify_python(
    source: str,
    *,
    path: str,
    memoryless: bool,
    exempt_comments: Iterable[str] = (),
) -> None:
    """Raise ``VerificationError`` unless ``source`` obeys the rules for its memory mode."""
    exempt = frozenset(exempt_comments)
    # Line numbers cost a full position pass: computed only to explain a failure.
    if _obeys(_scan(source, path, exempt, lines=False), memoryless=memoryless):
        return
    scanner = _scan(source, path, exempt, lines=True)
    calls = scanner.wire_calls
    if not memoryless:
        if len(calls) != 1:
            where = f" (lines {', '.join(map(str, calls))})" if calls else ""
            _fail(path, f"expected exactly one {WIRE_CALL} call site, found {len(calls)}{where}")
        return
    problems = [
        *(Finding(line, f"calls {WIRE_CALL}") for line in calls),
        *scanner.memory_imports,
        *scanner.memory_names,
        *scanner.memory_comments,
    ]
    if problems:
        first = min(problems, key=lambda f: f.line)
        _fail(
            path,
            f"memoryless bundle must not mention memory: line {first.line} {first.message}"
            + (f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""),
        )


def _obeys(scanner: _Scanner, *, memoryless: bool) -> bool:
    if not memoryless:
        return len(scanner.wire_calls) == 1
    return not (
        scanner.wire_calls
        or scanner.memory_imports
        or scanner.memory_names
        or scanner.memory_comments
    )


def verify_markdown(text: str, *, path: str, memoryless: bool, exempt: Iterable[str] = ()) -> None:
    """A memoryless README must not speak of memory (the user's own strings are exempt)."""
    if not memoryless:
        return
    scrubbed = text
    for value in sorted(set(exempt), key=len, reverse=True):
        if value:
            scrubbed = scrubbed.replace(value, "")
    for number, line in enumerate(scrubbed.split("\n"), start=1):
        match = MEMORY_PROSE.search(line)
        if match:
            _fail(path, f"memoryless bundle must not mention memory: line {number} {line!r}")


def _scan(source: str, path: str, exempt_comments: frozenset[str], *, lines: bool) -> _Scanner:
    try:
        module = cst.parse_module(source)
    except cst.ParserSyntaxError as exc:
        _fail(path, f"does not parse: {exc.message} (line {exc.raw_line})")
    scanner = _Scanner(exempt_comments, lines=lines)
    if lines:
        MetadataWrapper(module, unsafe_skip_copy=True).visit(scanner)
    else:
        module.visit(scanner)
    return scanner


def _fail(path: str, reason: str) -> NoReturn:
    raise VerificationError(
        f"generated {path} failed verification: {reason} (a template bug; please report it)"
    )
