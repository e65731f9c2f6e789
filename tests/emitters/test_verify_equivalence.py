"""The stdlib verifier (``specwire.emitters.verify``) gives the verdicts libcst gave.

``LibcstScanner`` below is the verifier the build used before (libcst visitors; kept here as the
oracle, the build no longer imports libcst). Both read the same sources — every snapshot, every
example's bundle, the rule cases of ``test_verify_rules`` and a source that puts a memory word
in every place Python has an identifier or a comment — and must agree on the call sites, on every
finding (line and message) and on ``verify_python``'s verdict and message, in both memory modes.
"""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst
import pytest
import test_verify_rules as rules
from emitter_cases import ROOT
from libcst.metadata import MetadataWrapper, PositionProvider

from specwire.emitters.bundle import Bundle
from specwire.emitters.verify import (
    MEMORY_WORDS,
    WIRE_CALL,
    Finding,
    VerificationError,
    _scan,
    verify_python,
)

SNAPSHOTS = ROOT / "snapshots"


class LibcstScanner(cst.CSTVisitor):
    """The libcst verifier's scanner, unchanged but for its name."""

    METADATA_DEPENDENCIES = (PositionProvider,)

    def __init__(self, exempt_comments: frozenset[str]) -> None:
        super().__init__()
        self.exempt_comments = exempt_comments
        self.wire_aliases: set[str] = {WIRE_CALL}
        self.wire_calls: list[int] = []
        self.memory_names: list[Finding] = []
        self.memory_imports: list[Finding] = []
        self.memory_comments: list[Finding] = []

    def _line(self, node: cst.CSTNode) -> int:
        return self.get_metadata(PositionProvider, node).start.line

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


def libcst_scan(source: str, exempt: frozenset[str]) -> LibcstScanner:
    scanner = LibcstScanner(exempt)
    MetadataWrapper(cst.parse_module(source), unsafe_skip_copy=True).visit(scanner)
    return scanner


def libcst_verdict(source: str, *, memoryless: bool, exempt: frozenset[str]) -> str:
    """What the libcst verifier said of ``source``: "ok" or its failure's reason."""
    scanner = libcst_scan(source, exempt)
    calls = scanner.wire_calls
    if not memoryless:
        if len(calls) == 1:
            return "ok"
        where = f" (lines {', '.join(map(str, calls))})" if calls else ""
        return f"expected exactly one {WIRE_CALL} call site, found {len(calls)}{where}"
    problems = [
        *(Finding(line, f"calls {WIRE_CALL}") for line in calls),
        *scanner.memory_imports,
        *scanner.memory_names,
        *scanner.memory_comments,
    ]
    if not problems:
        return "ok"
    first = min(problems, key=lambda f: f.line)
    more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
    return f"memoryless bundle must not mention memory: line {first.line} {first.message}{more}"


def stdlib_verdict(source: str, *, memoryless: bool, exempt: frozenset[str]) -> str:
    try:
        verify_python(source, path="agent.py", memoryless=memoryless, exempt_comments=exempt)
    except VerificationError as exc:
        reason = str(exc).removeprefix("generated agent.py failed verification: ")
        return reason.removesuffix(" (a template bug; please report it)")
    return "ok"


# A memory word in every place Python has an identifier, and in comments between brackets.
EVERY_PLACE = '''
"""Docstring about memory: a literal, exempt."""
from __future__ import annotations

import os.memory_path as memory_alias, json
from . import continuity_local
from .fragmented import (  # wiring comment inside brackets
    thing as wired_thing,
)
from pkg import *

MEMORY = "memory"  # memory comment after code
f"{memory_value!r:>{fragment_width}} text memory"

@memory_decorator(arg=1)
@pkg.wiring.decorate
class ContinuityStore(Base, metaclass=MemoryMeta):
    continuity_field: int = 0

    def method(self, /, memory_pos, *memory_args, memory_kw=1, **memory_kwargs) -> Memory:
        global memory_global
        nonlocal_user = lambda memory_lambda=None: memory_lambda
        memory_result = call(
            first,
            memory_keyword=second,  # memory comment in a call
            **extras,
        )
        return self.memory.wire_thing.other

    async def run(self) -> None:
        async with open_memory() as wired_handle:
            async for memory_item in wired_handle:
                await memory_item
        try:
            pass
        except MemoryError as memory_error:
            raise
        for wiring_target in [fragment for fragment in range(3) if fragment]:
            del wiring_target
        if (memory_walrus := 3) > 2:
            pass
        match memory_subject:
            case {"key": 1, **memory_rest}:
                pass
            case [1, *memory_star]:
                pass
            case Point(x=1, continuity=2) as memory_as:
                pass
            case memory.CONSTANT:
                pass
        value = (
            thing
            .memory_method()
            .other
        )


def outer():
    memory_closure = 1

    def inner():
        nonlocal memory_closure
        return memory_closure

    return inner
'''

WIRE_CALLS = """
from specwire.runtime.bundle import wire_memory as w, MemoryDeps
import specwire.runtime.bundle as sw

early_alias(1)  # not an alias yet: imported below
from elsewhere import wire_memory as early_alias

w(a, b)
sw.wire_memory(a, b)
early_alias(a, b)
wire_memory(
    a,
    b,
)
[wire_memory(x) for x in y]
"""

PLAIN_WITH_WORDS_IN_STRINGS = '''
"""memory, continuity, fragment, wire_memory, wiring."""
TEXT = "memory" "wired" f"fragment {name}"
'''


def bundle_sources(bundles: dict[str, Bundle]) -> Iterator[tuple[str, str]]:
    for stem, bundle in sorted(bundles.items()):
        for path, text in bundle.items():
            if path.endswith(".py"):
                yield f"{stem}/{path}", text


def corpus(example_bundles: dict[str, Bundle]) -> list[tuple[str, str]]:
    sources = [
        (str(path.relative_to(SNAPSHOTS)), path.read_text(encoding="utf-8"))
        for path in sorted(SNAPSHOTS.rglob("*.py"))
        if path.name != "conftest.py"
    ]
    sources += list(bundle_sources(example_bundles))
    cases = {
        "ONE_CALL": rules.ONE_CALL,
        "TWO_CALLS": rules.TWO_CALLS,
        "ALIASED_SECOND_CALL": rules.ALIASED_SECOND_CALL,
        "NO_CALL": rules.NO_CALL,
        "PLAIN": rules.PLAIN,
        "EVERY_PLACE": EVERY_PLACE,
        "WIRE_CALLS": WIRE_CALLS,
        "PLAIN_WITH_WORDS_IN_STRINGS": PLAIN_WITH_WORDS_IN_STRINGS,
    }
    sources += [(name, rules.dedent(text)) for name, text in cases.items()]
    return sources


@pytest.fixture(scope="module")
def sources(example_bundles: dict[str, Bundle]) -> list[tuple[str, str]]:
    found = corpus(example_bundles)
    assert len(found) > 30
    return found


def test_the_corpus_holds_both_kinds_of_bundle(sources: list[tuple[str, str]]) -> None:
    memoryless = [name for name, text in sources if not libcst_scan(text, frozenset()).wire_calls]
    wired = [name for name, text in sources if len(libcst_scan(text, frozenset()).wire_calls) == 1]
    assert memoryless and wired


def test_same_call_sites_and_findings(sources: list[tuple[str, str]]) -> None:
    for name, source in sources:
        oracle = libcst_scan(source, frozenset())
        ours = _scan(source, name, frozenset())
        assert ours.wire_calls == oracle.wire_calls, name
        assert ours.memory_imports == oracle.memory_imports, name
        assert ours.memory_comments == oracle.memory_comments, name
        # Names: the same findings; the order within one line is source order in both.
        assert ours.memory_names == oracle.memory_names, name


@pytest.mark.parametrize("memoryless", [False, True], ids=["wired", "memoryless"])
def test_same_verdicts(sources: list[tuple[str, str]], memoryless: bool) -> None:
    for name, source in sources:
        header = tuple(line for line in source.splitlines()[:2] if line.startswith("# "))
        for exempt in (frozenset(), frozenset(header)):
            expected = libcst_verdict(source, memoryless=memoryless, exempt=exempt)
            assert stdlib_verdict(source, memoryless=memoryless, exempt=exempt) == expected, name


def test_every_place_is_found() -> None:
    """The synthetic source reaches the identifier places the rules care about."""
    found = {f.message for f in _scan(rules.dedent(EVERY_PLACE), "x", frozenset()).memory_names}
    for word in (
        "memory_alias",
        "continuity_local",
        "fragmented",
        "wired_thing",
        "memory_value",
        "fragment_width",
        "memory_pos",
        "memory_args",
        "memory_kw",
        "memory_kwargs",
        "memory_global",
        "memory_lambda",
        "memory_keyword",
        "memory_rest",
        "memory_star",
        "continuity",
        "memory_as",
        "memory_error",
        "memory_walrus",
        "memory_method",
        "memory_closure",
        "ContinuityStore",
    ):
        assert f"names {word}" in found, word


def test_a_snapshot_breaks_the_same_way_in_both() -> None:
    """A memory word slipped into a memoryless snapshot: both verifiers name the same line."""
    plain = next(path for path in sorted(SNAPSHOTS.rglob("*.py")) if "plain" in str(path))
    lines = plain.read_text(encoding="utf-8").splitlines()
    for index in range(len(lines) // 2, len(lines)):
        if lines[index] and not lines[index].startswith((" ", "#", ")", "]", "}")):
            lines.insert(index, "memory_probe = None  # memory")
            break
    source = "\n".join(lines) + "\n"
    verdict = libcst_verdict(source, memoryless=True, exempt=frozenset())
    assert verdict.startswith("memoryless bundle must not mention memory")
    assert stdlib_verdict(source, memoryless=True, exempt=frozenset()) == verdict
