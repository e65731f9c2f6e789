"""Verification of generated files: Python with the standard library's ``ast`` and ``tokenize``
(and a text scan for markdown).

A Python file must parse. With memory wired it must contain exactly one ``wire_memory`` call
site. A memoryless file must contain no ``wire_memory`` call, no import of a memory module, no
identifier (names, attribute names, import names, parameters) and no comment that speaks of
memory, continuity, fragments or wiring. String literals are exempt: they carry the user's own
text (the instructions may well mention memory). A failure is a template bug, reported as a
``VerificationError`` naming the file, the line and the rule.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from collections.abc import Iterable
from dataclasses import dataclass
from typing import NoReturn

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


class _Scanner:
    """Collects wire_memory call sites, memory imports, identifiers and comments with their
    lines: identifiers from the syntax tree (f-string expressions included), comments from the
    token stream. String literals are never looked at."""

    def __init__(self, exempt_comments: frozenset[str]) -> None:
        self.exempt_comments = exempt_comments
        self.wire_aliases: set[str] = {WIRE_CALL}
        self.wire_calls: list[int] = []
        self.memory_names: list[Finding] = []
        self.memory_imports: list[Finding] = []
        self.memory_comments: list[Finding] = []

    def scan(self, tree: ast.Module, source: str) -> None:
        nodes = list(ast.walk(tree))
        for node in nodes:  # aliases first: a call may come before its import in walk order
            if isinstance(node, ast.ImportFrom):
                for alias in node.names:
                    if alias.name == WIRE_CALL:
                        self.wire_aliases.add(alias.asname or alias.name)
        for node in nodes:
            self._visit(node)
        self.wire_calls.sort()
        self.memory_names.sort(key=lambda finding: finding.line)
        self.memory_imports.sort(key=lambda finding: finding.line)
        for token in tokenize.generate_tokens(io.StringIO(source).readline):
            if token.type != tokenize.COMMENT:
                continue
            value = token.string.rstrip()
            if value in self.exempt_comments:
                continue
            if MEMORY_WORDS.search(value):
                self.memory_comments.append(Finding(token.start[0], f"comment {value!r}"))

    def _name(self, name: str | None, line: int) -> None:
        if name is None:
            return
        for part in name.split("."):
            if MEMORY_WORDS.search(part):
                self.memory_names.append(Finding(line, f"names {part}"))

    def _visit(self, node: ast.AST) -> None:
        line = getattr(node, "lineno", 0)
        if isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if MEMORY_WORDS.search(module):
                self.memory_imports.append(Finding(line, f"imports from {module}"))
            self._name(node.module, line)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if MEMORY_WORDS.search(alias.name):
                    self.memory_imports.append(Finding(line, f"imports {alias.name}"))
        elif isinstance(node, ast.Call):
            func = node.func
            if (isinstance(func, ast.Name) and func.id in self.wire_aliases) or (
                isinstance(func, ast.Attribute) and func.attr == WIRE_CALL
            ):
                self.wire_calls.append(line)
        for name in _identifiers(node):
            self._name(name, line)


def _identifiers(node: ast.AST) -> list[str | None]:
    """The identifiers ``node`` itself holds (not its children's)."""
    if isinstance(node, ast.Name):
        return [node.id]
    if isinstance(node, ast.Attribute):
        return [node.attr]
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return [node.name]
    if isinstance(node, ast.arg):
        return [node.arg]
    if isinstance(node, ast.keyword):
        return [node.arg]
    if isinstance(node, ast.alias):
        return [node.name, node.asname]
    if isinstance(node, ast.Global | ast.Nonlocal):
        return list(node.names)
    if isinstance(node, ast.ExceptHandler | ast.MatchAs | ast.MatchStar):
        return [node.name]
    if isinstance(node, ast.MatchMapping):
        return [node.rest]
    if isinstance(node, ast.MatchClass):
        return list(node.kwd_attrs)
    return []


def count_wire_calls(source: str) -> int:
    """The number of ``wire_memory`` call sites in ``source`` (which must parse)."""
    return len(_scan(source, "<source>", frozenset()).wire_calls)


def verify_python(
    source: str,
    *,
    path: str,
    memoryless: bool,
    exempt_comments: Iterable[str] = (),
) -> None:
    """Raise ``VerificationError`` unless ``source`` obeys the rules for its memory mode."""
    scanner = _scan(source, path, frozenset(exempt_comments))
    if _obeys(scanner, memoryless=memoryless):
        return
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


def _scan(source: str, path: str, exempt_comments: frozenset[str]) -> _Scanner:
    try:
        tree = ast.parse(source, filename=path)
    except (SyntaxError, ValueError) as exc:
        line = getattr(exc, "lineno", None)
        reason = getattr(exc, "msg", None) or str(exc)
        _fail(path, f"does not parse: {reason}" + (f" (line {line})" if line else ""))
    scanner = _Scanner(exempt_comments)
    try:
        scanner.scan(tree, source)
    except (tokenize.TokenError, SyntaxError) as exc:
        _fail(path, f"does not tokenize: {exc}")
    return scanner


def _fail(path: str, reason: str) -> NoReturn:
    raise VerificationError(
        f"generated {path} failed verification: {reason} (a template bug; please report it)"
    )
