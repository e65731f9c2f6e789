"""The runtime's layers (docs/architecture.md): a package imports only packages of lower layers.

Every import counts, including those inside functions and under ``TYPE_CHECKING``: a lazy
import is still a dependency. A package missing from ``LAYERS`` fails the test, so a new one
is placed deliberately.
"""

from __future__ import annotations

import ast
import re
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RUNTIME = ROOT / "runtime"

# Lower numbers sit lower. Packages of one layer may not import each other.
LAYERS: dict[str, int] = {
    "core": 0,  # the contract (fragment), errors, ids, paths, tenancy, seams, tool types, clock
    "fs": 1,  # atomic writes, race-free resolution beneath a root, safe opens, locks, key files
    "safety": 1,  # injection scanner, redaction, framing, secret references
    "pg": 1,  # PostgreSQL pools and per-component migrations (tiers kept in the database)
    "sessions": 2,  # sealed session logs
    "embedders": 3,
    "models": 3,  # model adapters
    "loop": 4,  # the agent loop; tiers reach it through core.seams, never the other way
    "usage": 4,  # a tenant's usage ledger as data (turns, the dream's kind): files, PostgreSQL
    "facts": 5,  # the fact store (lexical, vector, sql) and its providers (local, postgres, http)
    "continuity": 5,  # focus, plans, goals, handoff
    "tools": 5,  # builtin tools: files, grep, shell, fetch, MCP tool servers
    "skills": 5,
    "wiki": 6,
    "documents": 6,  # document memory (memory.documents) on the file and PostgreSQL backends
    "erasure": 6,
    "evals": 6,
    "dream": 7,
    "learning": 7,  # the learning loop: study passes into the wiki, the exam, their gaps
    "wiring": 8,  # wire_memory: the composition root of the tiers
    "owner": 9,  # the owner's commands
    "console": 10,  # the owner's web console; assembles `codegen memory`'s command table
    "hosts": 11,  # what bundles start (cli, channel, managed, research, crew) and http/
    "bundle": 12,  # the one module generated bundles import
}


def package_of(module: str) -> str | None:
    parts = module.split(".")
    if parts[:2] != ["specwire", "runtime"] or len(parts) < 3:
        return None
    return parts[2]


def runtime_imports() -> dict[tuple[str, str], list[str]]:
    edges: dict[tuple[str, str], list[str]] = defaultdict(list)
    for path in sorted(RUNTIME.rglob("*.py")):
        rel = path.relative_to(RUNTIME)
        source = rel.parts[0].removesuffix(".py")
        if source == "__init__":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                targets = [node.module]
                if node.module == "specwire.runtime":
                    targets = [f"specwire.runtime.{alias.name}" for alias in node.names]
            else:
                continue
            for target in targets:
                package = package_of(target)
                if package is not None and package != source:
                    edges[(source, package)].append(f"runtime/{rel.as_posix()}:{node.lineno}")
    return edges


def test_every_runtime_package_has_a_layer() -> None:
    packages = {
        p.name if p.is_dir() else p.stem
        for p in RUNTIME.iterdir()
        if (p.is_dir() and (p / "__init__.py").exists())
        or (p.suffix == ".py" and p.stem != "__init__")
    }
    assert packages == set(LAYERS)


def test_packages_import_only_lower_layers() -> None:
    wrong = [
        f"{where[0]}: {source} (layer {LAYERS[source]}) imports {target} (layer {LAYERS[target]})"
        for (source, target), where in sorted(runtime_imports().items())
        if LAYERS[target] >= LAYERS[source]
    ]
    assert wrong == []


def test_no_cycles_between_runtime_packages() -> None:
    graph: dict[str, set[str]] = defaultdict(set)
    for source, target in runtime_imports():
        graph[source].add(target)

    def reaches(start: str, goal: str, seen: set[str]) -> bool:
        if start == goal:
            return True
        seen.add(start)
        return any(reaches(n, goal, seen) for n in graph.get(start, set()) if n not in seen)

    cycles = sorted(f"{a} <-> {b}" for a in list(graph) for b in graph[a] if reaches(b, a, set()))
    assert cycles == []


def test_the_architecture_map_names_only_packages_that_exist() -> None:
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    named = set(re.findall(r"`(specwire(?:\.[a-z_]+)+)`", text))
    assert named, "docs/architecture.md names no package"
    missing = []
    for dotted in sorted(named):
        parts = dotted.split(".")[1:]
        path = ROOT.joinpath(*parts)
        if not (path.is_dir() or path.with_suffix(".py").is_file()):
            missing.append(dotted)
    assert missing == []
    for package in LAYERS:
        assert f"`specwire.runtime.{package}`" in text, f"docs/architecture.md omits {package}"
