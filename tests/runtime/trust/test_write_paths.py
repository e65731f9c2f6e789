"""Every write path of the runtime is listed with how its text is screened (a new one fails).

The walk finds each call of a write primitive in ``runtime/`` — the atomic writers,
``write_text``/``write_bytes``, ``os.write``, ``rewrite_log``, and ``execute``/``executemany``
of an SQL ``INSERT``/``UPDATE``/``REPLACE`` (spelled inline or in a module constant) — and
names the function it is in. That set must equal ``WRITE_PATHS``'s keys.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

from specwire.runtime.safety.write_paths import WRITE_PATHS

RUNTIME = Path(__file__).resolve().parents[3] / "runtime"
_PRIMITIVES = frozenset(
    {"write_atomic", "replace_at", "replace_atomically", "write_text", "write_bytes", "rewrite_log"}
)
_SQL_WRITES = ("INSERT", "UPDATE", "REPLACE")


def _literal(node: ast.expr) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(
            part.value
            for part in node.values
            if isinstance(part, ast.Constant) and isinstance(part.value, str)
        )
    return None


def _writes(call: ast.Call, constants: dict[str, str]) -> bool:
    func = call.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
    if name in _PRIMITIVES:
        return True
    if name == "write" and isinstance(func, ast.Attribute):
        return isinstance(func.value, ast.Name) and func.value.id == "os"
    if name in ("execute", "executemany") and call.args:
        first = call.args[0]
        sql = constants.get(first.id) if isinstance(first, ast.Name) else _literal(first)
        return sql is not None and sql.lstrip().upper().startswith(_SQL_WRITES)
    return False


def _sites(source: str, module: str) -> Iterator[str]:
    """``module:qualname`` of every function in ``source`` that calls a write primitive."""
    tree = ast.parse(source)
    constants: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, text = node.targets[0], _literal(node.value)
            if isinstance(target, ast.Name) and text is not None:
                constants[target.id] = text

    def walk(node: ast.AST, scope: tuple[str, ...]) -> Iterator[str]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                yield from walk(child, (*scope, child.name))
                continue
            if isinstance(child, ast.Call) and _writes(child, constants):
                yield f"{module}:{'.'.join(scope) or '<module>'}"
            yield from walk(child, scope)

    yield from walk(tree, ())


def write_sites() -> set[str]:
    found: set[str] = set()
    for path in sorted(RUNTIME.rglob("*.py")):
        module = ".".join(path.relative_to(RUNTIME).with_suffix("").parts)
        found.update(_sites(path.read_text(encoding="utf-8"), module))
    return found


def test_every_write_path_is_listed_with_how_it_is_screened() -> None:
    found = write_sites()
    unlisted = sorted(found - WRITE_PATHS.keys())
    assert not unlisted, (
        "new write path(s): screen and redact their text (runtime/safety/screening.py) and list "
        f"them in runtime/safety/write_paths.py: {unlisted}"
    )
    stale = sorted(WRITE_PATHS.keys() - found)
    assert not stale, f"listed but no longer writing: {stale}"


def test_every_entry_says_how() -> None:
    for site, how in WRITE_PATHS.items():
        assert how.startswith(("screened: ", "host: ")), site


def test_the_walk_finds_a_new_write_however_it_is_spelled() -> None:
    source = (
        "import os\n"
        "_SQL = 'INSERT INTO notes VALUES (?)'\n"
        "class Notes:\n"
        "    def keep(self, conn, text):\n"
        "        conn.execute(_SQL, (text,))\n"
        "    def edit(self, conn, text):\n"
        "        conn.executemany(f'UPDATE notes SET text = {text!r}', [])\n"
        "    def read(self, conn):\n"
        "        return conn.execute('SELECT text FROM notes')\n"
        "def dump(path, fd, text):\n"
        "    path.write_text(text)\n"
        "    os.write(fd, text.encode())\n"
    )
    assert set(_sites(source, "probe")) == {
        "probe:Notes.keep",
        "probe:Notes.edit",
        "probe:dump",
    }
