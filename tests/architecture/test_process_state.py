"""Process-wide state in the runtime is named in one place: docs/architecture.md's table.

A module-level cache or registry (an empty dict, set or list, an ``OrderedDict``, a weak
dictionary, a ``…Cache`` object), a memoized function (``functools.cache``/``lru_cache``) or a
name rebound through ``global`` is state every caller in the process shares. Each one needs a
row in "Process-wide state", and every row must still name something that exists.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RUNTIME = ROOT / "runtime"
SECTION = "## Process-wide state"
MUTABLE_CALLS = frozenset(
    {
        "OrderedDict",
        "WeakKeyDictionary",
        "WeakSet",
        "WeakValueDictionary",
        "defaultdict",
        "deque",
        "dict",
        "list",
        "set",
    }
)
MEMOIZERS = frozenset({"cache", "lru_cache"})


def _callee(call: ast.Call) -> str:
    func = call.func
    if isinstance(func, ast.Attribute):
        return func.attr
    return func.id if isinstance(func, ast.Name) else ""


def _is_shared_container(value: ast.expr | None) -> bool:
    if isinstance(value, ast.Dict):
        return not value.keys
    if isinstance(value, ast.Set | ast.List):
        return not value.elts
    if isinstance(value, ast.Call):
        name = _callee(value)
        return name in MUTABLE_CALLS or name.endswith("Cache")
    return False


def _is_memoized(function: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    for decorator in function.decorator_list:
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        name = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")
        if name in MEMOIZERS:
            return True
    return False


def shared_state(source: str) -> set[str]:
    """The names of a module's process-wide state."""
    tree = ast.parse(source)
    found: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.Assign) and _is_shared_container(node.value):
            found |= {target.id for target in node.targets if isinstance(target, ast.Name)}
        elif (
            isinstance(node, ast.AnnAssign)
            and isinstance(node.target, ast.Name)
            and _is_shared_container(node.value)
        ):
            found.add(node.target.id)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and _is_memoized(node):
            found.add(node.name)
    for node in ast.walk(tree):
        if isinstance(node, ast.Global):
            found |= set(node.names)
    return found


def runtime_state() -> set[tuple[str, str]]:
    state: set[tuple[str, str]] = set()
    for path in sorted(RUNTIME.rglob("*.py")):
        module = path.relative_to(RUNTIME).with_suffix("").as_posix().replace("/", ".")
        module = module.removesuffix(".__init__")
        state |= {(module, name) for name in shared_state(path.read_text(encoding="utf-8"))}
    return state


def documented_state() -> set[tuple[str, str]]:
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    assert SECTION in text, f"docs/architecture.md has no {SECTION!r} section"
    section = text.split(SECTION, 1)[1].split("\n## ", 1)[0]
    rows: set[tuple[str, str]] = set()
    for line in section.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) < 3 or not cells[0].startswith("`"):
            continue
        module = cells[0].strip("`")
        rows |= {(module, name) for name in re.findall(r"`([A-Za-z_][A-Za-z0-9_]*)`", cells[1])}
    return rows


def test_every_piece_of_process_wide_state_is_documented() -> None:
    undocumented = sorted(runtime_state() - documented_state())
    assert not undocumented, (
        "process-wide state missing from docs/architecture.md's table (pass it in instead, "
        f"or add a row saying why it is per process): {undocumented}"
    )


def test_every_documented_row_still_exists() -> None:
    documented = documented_state()
    assert documented
    stale = sorted(documented - runtime_state())
    assert not stale, f"docs/architecture.md lists process-wide state that is gone: {stale}"


def test_the_scan_finds_each_kind_of_shared_state() -> None:
    source = (
        "import functools\nfrom collections import OrderedDict\n"
        "_a: dict[str, int] = {}\n_b = set()\n_c = OrderedDict()\n_d = FolderCache()\n"
        "TABLE = {'x': 1}\nNAMES = ['a']\n_pool = None\n"
        "@functools.cache\ndef _memo() -> int:\n    return 1\n"
        "@functools.lru_cache(maxsize=4)\ndef _bounded(x: int) -> int:\n    return x\n"
        "def _get() -> None:\n    global _pool\n"
    )
    assert shared_state(source) == {"_a", "_b", "_c", "_d", "_memo", "_bounded", "_pool"}
