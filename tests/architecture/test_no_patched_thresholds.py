"""Tuning values are parameters (CONTRIBUTING.md): no test monkeypatches a module constant of
the runtime (``monkeypatch.setattr(module, "SOME_LIMIT", …)``), which would change it for
every caller in the process while the test runs. A test passes the value in instead
(``FactsTuning``, a constructor or function argument)."""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
# A constant-looking name: upper case, digits and underscores, optionally private.
_CONSTANT = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")

# Older schemas simulated by cutting a provider's migration list: not a tuning value. The
# PostgreSQL provider's migrations are module data; a parameter for them belongs with that
# provider's work (runtime/facts/providers/postgres/).
KNOWN: frozenset[tuple[str, str]] = frozenset(
    {
        ("conformance/test_postgres_bm25.py", "MIGRATIONS"),
        ("conformance/test_postgres_bm25.py", "SCHEMA_VERSION"),
    }
)


def _patched_constants(path: Path) -> list[tuple[int, str]]:
    found: list[tuple[int, str]] = []
    text = path.read_text(encoding="utf-8")
    if "monkeypatch.setattr" not in text:
        return found  # most files: no parse needed
    for node in ast.walk(ast.parse(text)):
        if not (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "setattr"
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id == "monkeypatch"
            and node.args
        ):
            continue
        if isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
            name = node.args[0].value.rsplit(".", 1)[-1]  # setattr("pkg.module.NAME", value)
        elif len(node.args) >= 2 and isinstance(node.args[1], ast.Constant):
            name = node.args[1].value  # setattr(module, "NAME", value)
        else:
            continue
        if isinstance(name, str) and set(name) <= _CONSTANT and any(c.isalpha() for c in name):
            found.append((node.lineno, name))
    return found


def test_no_test_monkeypatches_a_module_constant() -> None:
    patched = [
        f"tests/{rel}:{line}: {name}"
        for path in sorted(TESTS.rglob("*.py"))
        for line, name in _patched_constants(path)
        if ((rel := path.relative_to(TESTS).as_posix()), name) not in KNOWN
    ]
    assert patched == []


def test_the_check_sees_both_spellings(tmp_path: Path) -> None:
    sample = tmp_path / "test_sample.py"
    sample.write_text(
        "def test_x(monkeypatch):\n"
        '    monkeypatch.setattr(index, "TAIL_MERGE_MIN", 16)\n'
        '    monkeypatch.setattr("specwire.runtime.wiring.ANNOUNCED_MAX", 2)\n'
        '    monkeypatch.setattr(loader, "read_regular_text", None)\n'
        '    monkeypatch.setenv("OPENAI_API_KEY", "x")\n',
        encoding="utf-8",
    )
    assert _patched_constants(sample) == [(2, "TAIL_MERGE_MIN"), (3, "ANNOUNCED_MAX")]
