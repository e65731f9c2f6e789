"""Verification of generated files with the stdlib ``ast`` and ``tokenize`` (and a text scan for
markdown).

A Python file must parse. With memory wired it must contain exactly one ``wire_memory`` call
site. A memoryless file must contain no ``wire_memory`` call, no import of a memory module, no
identifier (names, attribute names, import names, parameters) and no comment that speaks of
memory, continuity, fragments or wiring. String literals are exempt: they carry the user's own
text (the instructions may well mention memory). A failure is a template bug, reported as a
``VerificationError`` naming the file, the line and the rule.

The stdlib is enough for every rule: identifiers are the string fields of the syntax tree (every
one but a constant's value and a type comment), comments are the tokenizer's. libcst, which
these checks used before, costs 170-300 ms to import on every build; nothing here needs a
lossless tree.
"""

from __future__ import annotations

import ast
import bisect
import io
import re
import tokenize
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import NoReturn

WIRE_CALL = "wire_memory"
# What a memoryless bundle must never name (identifiers, comments, import modules).
MEMORY_WORDS = re.compile(r"memory|continuity|fragment|wire_|wiring|wired", re.IGNORECASE)
# The same, for prose: words, so `SPECWIRE_MODEL` is not read as `wire_`.
MEMORY_PROSE = re.compile(
    r"memor(?:y|ies)|continuity|fragment|wire_memory|\bwir(?:ing|ed)\b|\brecall|\bremember",
    re.IGNORECASE,
)
# String fields of a syntax node that are not identifiers: a literal's value and kind (string
# literals carry the user's text), and type comments (comments: read from the tokenizer).
_LITERAL_FIELDS = frozenset({"value", "kind"})


class VerificationError(RuntimeError):
    """Generated code broke a verification rule: an internal error (a template bug)."""


@dataclass(frozen=True)
class Finding:
    line: int
    message: str


# A position in the source, for ordering: (line, column).
Position = tuple[int, int]


@dataclass
class Scan:
    """What one source holds that the rules speak of, each list in source order."""

    wire_calls: list[int] = field(default_factory=list)
    memory_imports: list[Finding] = field(default_factory=list)
    memory_names: list[Finding] = field(default_factory=list)
    memory_comments: list[Finding] = field(default_factory=list)


def _start(node: ast.AST) -> Position:
    return getattr(node, "lineno", 0), getattr(node, "col_offset", 0)


class _NameTokens:
    """Where each name token of the source is, to place identifiers the tree does not place
    (a function's name after ``def``, ``except … as name``, a pattern's capture, …)."""

    def __init__(self, tokens: Iterable[tokenize.TokenInfo]) -> None:
        self._at: dict[str, list[Position]] = {}
        for token in tokens:
            if token.type == tokenize.NAME:
                self._at.setdefault(token.string, []).append(token.start)

    def first(self, name: str, after: Position) -> Position | None:
        places = self._at.get(name, [])
        index = bisect.bisect_left(places, after)
        return places[index] if index < len(places) else None


def _identifiers(node: ast.AST, tokens: _NameTokens) -> Iterator[tuple[Position, str]]:
    """Every identifier ``node`` holds itself (not its children's), each dotted part apart,
    with where it is written."""
    if isinstance(node, ast.Name):
        yield _start(node), node.id
        return
    if isinstance(node, ast.Attribute):  # the attribute's name ends the expression
        yield (node.end_lineno or 0, (node.end_col_offset or 0) - len(node.attr)), node.attr
        return
    cursor = _start(node)
    for name, value in ast.iter_fields(node):
        if name == "type_comment" or (isinstance(node, ast.Constant) and name in _LITERAL_FIELDS):
            continue
        texts = [value] if isinstance(value, str) else value if isinstance(value, list) else []
        for text in texts:
            if not isinstance(text, str):
                continue
            for part in text.split("."):
                if not part or part == "*":
                    continue
                place = tokens.first(part, cursor)
                if place is None:  # not written as a name token: at the node's start
                    yield _start(node), part
                    continue
                cursor = (place[0], place[1] + 1)
                yield place, part


def _alias_target(alias: ast.alias) -> str:
    return alias.asname if alias.asname is not None else alias.name


def _scan_tree(tree: ast.Module, tokens: _NameTokens) -> Scan:
    scan = Scan()
    nodes = sorted(ast.walk(tree), key=_start)  # source order, as the rules read the file
    wire_aliases = {WIRE_CALL}
    names: list[tuple[Position, Finding]] = []
    for node in nodes:
        line = _start(node)[0]
        if isinstance(node, ast.ImportFrom):
            module = node.module or ""  # without the dots of a relative import
            if MEMORY_WORDS.search(module):
                scan.memory_imports.append(Finding(line, f"imports from {module}"))
            for alias in node.names:
                if alias.name == WIRE_CALL:
                    wire_aliases.add(_alias_target(alias))
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if MEMORY_WORDS.search(alias.name):
                    scan.memory_imports.append(Finding(line, f"imports {alias.name}"))
        elif isinstance(node, ast.Call):
            func = node.func
            if (isinstance(func, ast.Name) and func.id in wire_aliases) or (
                isinstance(func, ast.Attribute) and func.attr == WIRE_CALL
            ):
                scan.wire_calls.append(line)
        for where, identifier in _identifiers(node, tokens):
            if MEMORY_WORDS.search(identifier):
                names.append((where, Finding(where[0], f"names {identifier}")))
    scan.memory_names = [finding for _, finding in sorted(names, key=lambda item: item[0])]
    return scan


def _scan(source: str, path: str, exempt_comments: frozenset[str]) -> Scan:
    try:
        tree = ast.parse(source, filename=path)
        tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    except SyntaxError as exc:
        _fail(path, f"does not parse: {exc.msg} (line {exc.lineno})")
    except tokenize.TokenError as exc:  # pragma: no cover - ast.parse refuses such a source first
        _fail(path, f"does not parse: {exc}")
    scan = _scan_tree(tree, _NameTokens(tokens))
    scan.memory_comments = [
        Finding(token.start[0], f"comment {token.string!r}")
        for token in tokens
        if token.type == tokenize.COMMENT
        and token.string not in exempt_comments
        and MEMORY_WORDS.search(token.string)
    ]
    return scan


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
    scan = _scan(source, path, frozenset(exempt_comments))
    calls = scan.wire_calls
    if not memoryless:
        if len(calls) != 1:
            where = f" (lines {', '.join(map(str, calls))})" if calls else ""
            _fail(path, f"expected exactly one {WIRE_CALL} call site, found {len(calls)}{where}")
        return
    problems = [
        *(Finding(line, f"calls {WIRE_CALL}") for line in calls),
        *scan.memory_imports,
        *scan.memory_names,
        *scan.memory_comments,
    ]
    if problems:
        first = min(problems, key=lambda f: f.line)
        _fail(
            path,
            f"memoryless bundle must not mention memory: line {first.line} {first.message}"
            + (f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""),
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


def _fail(path: str, reason: str) -> NoReturn:
    raise VerificationError(
        f"generated {path} failed verification: {reason} (a template bug; please report it)"
    )
