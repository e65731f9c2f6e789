"""The verifier reads Python with the standard library (``ast`` + ``tokenize``: no libcst import
on a build's path). This pins it to what libcst sees: for every generated Python file of every
example, and for hand-written cases, both find the same wire_memory call lines, memory imports,
memory identifiers and comments."""

from __future__ import annotations

import re
import textwrap

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper, PositionProvider

from emitters.bundle import Bundle
from emitters.verify import MEMORY_WORDS, WIRE_CALL, _scan

Findings = tuple[list[int], list[tuple[int, str]], list[tuple[int, str]], list[tuple[int, str]]]


class _LibcstScanner(cst.CSTVisitor):
    """The libcst visitor the verifier used before (the reference)."""

    METADATA_DEPENDENCIES = (PositionProvider,)

    def __init__(self) -> None:
        super().__init__()
        self.aliases = {WIRE_CALL}
        self.calls: list[int] = []
        self.names: list[tuple[int, str]] = []
        self.imports: list[tuple[int, str]] = []
        self.comments: list[tuple[int, str]] = []

    def _line(self, node: cst.CSTNode) -> int:
        return self.get_metadata(PositionProvider, node).start.line

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        module = _dotted(node.module) if node.module is not None else ""
        if MEMORY_WORDS.search(module):
            self.imports.append((self._line(node), f"imports from {module}"))
        if isinstance(node.names, cst.ImportStar):
            return
        for alias in node.names:
            if _dotted(alias.name) == WIRE_CALL:
                target = alias.asname.name if alias.asname is not None else alias.name
                assert isinstance(target, cst.Name)
                self.aliases.add(target.value)

    def visit_Import(self, node: cst.Import) -> None:
        for alias in node.names:
            module = _dotted(alias.name)
            if MEMORY_WORDS.search(module):
                self.imports.append((self._line(node), f"imports {module}"))

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if (isinstance(func, cst.Name) and func.value in self.aliases) or (
            isinstance(func, cst.Attribute) and func.attr.value == WIRE_CALL
        ):
            self.calls.append(self._line(node))

    def visit_Name(self, node: cst.Name) -> None:
        if MEMORY_WORDS.search(node.value):
            self.names.append((self._line(node), f"names {node.value}"))

    def visit_Comment(self, node: cst.Comment) -> None:
        if MEMORY_WORDS.search(node.value):
            self.comments.append((self._line(node), f"comment {node.value!r}"))


def _dotted(node: cst.BaseExpression) -> str:
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        return f"{_dotted(node.value)}.{node.attr.value}"
    return ""


def libcst_findings(source: str) -> Findings:
    scanner = _LibcstScanner()
    MetadataWrapper(cst.parse_module(source)).visit(scanner)
    return (
        sorted(scanner.calls),
        sorted(scanner.imports),
        sorted(scanner.names),
        sorted(scanner.comments),
    )


def stdlib_findings(source: str) -> Findings:
    scanner = _scan(source, "x.py", frozenset())
    return (
        sorted(scanner.wire_calls),
        sorted((f.line, f.message) for f in scanner.memory_imports),
        sorted((f.line, f.message) for f in scanner.memory_names),
        sorted((f.line, f.message) for f in scanner.memory_comments),
    )


def test_every_generated_python_file_reads_the_same(example_bundles: dict[str, Bundle]) -> None:
    checked = 0
    for bundle in example_bundles.values():
        for path, text in bundle.items():
            if path.endswith(".py"):
                assert stdlib_findings(text) == libcst_findings(text), path
                checked += 1
    assert checked >= 10


CASES = [
    "from runtime.wiring import MemoryDeps, wire_memory\nwired = wire_memory(F, MemoryDeps())\n",
    "from runtime.wiring import wire_memory as wm\nimport runtime.wiring\nwm(a)\n"
    "runtime.wiring.wire_memory(a)\n",
    "from .memory import x\nfrom . import continuity\n",
    "import runtime.fragment as frag, os.path\n",
    "def build(continuity: int, *memory, **wired) -> None:\n    global wiring\n",
    "class MemoryThing:\n    async def fragment(self): ...\n",
    "run(options=wired.options)  # wire_ it\nx = f'{memory_store!r} {y.continuity}'\n",
    "try:\n    pass\nexcept E as memory_error:\n    pass\n",
    "match x:\n    case {'a': 1, **memory}: pass\n    case P(continuity=1): pass\n"
    "    case [*wired]: pass\n    case Q() as fragment: pass\n",
    "x = 'wire_memory(a)'  # plain\ny = '''\n# memory in a string\n'''\n",
    "lambda memory: memory\n[continuity for continuity in range(3)]\n",
]


@pytest.mark.parametrize("source", CASES)
def test_hand_written_cases_read_the_same(source: str) -> None:
    text = textwrap.dedent(source)
    assert stdlib_findings(text) == libcst_findings(text)


def test_the_memory_words_are_shared() -> None:
    assert MEMORY_WORDS.flags & re.IGNORECASE
