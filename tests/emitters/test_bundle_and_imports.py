"""Bundle (ordered, immutable, safe paths) and the import registry (imports as data)."""

from __future__ import annotations

import pytest

from specwire.emitters.bundle import Bundle, BundlePathError
from specwire.emitters.imports import ImportConflictError, ImportRegistry


def test_bundle_keeps_order_and_is_immutable() -> None:
    bundle = Bundle([("b.py", "B\n"), ("a.md", "A\n")])
    assert list(bundle) == ["b.py", "a.md"]
    assert bundle.paths == ("b.py", "a.md")
    assert bundle["a.md"] == "A\n"
    with pytest.raises(TypeError):
        bundle["c"] = "x"  # type: ignore[index]


def test_bundle_equality_is_order_sensitive() -> None:
    one = Bundle([("a", "1"), ("b", "2")])
    assert one == Bundle([("a", "1"), ("b", "2")])
    assert one != Bundle([("b", "2"), ("a", "1")])
    assert hash(one) == hash(Bundle([("a", "1"), ("b", "2")]))


def test_with_file_adds_or_replaces_in_place() -> None:
    bundle = Bundle([("a", "1"), ("b", "2")])
    assert list(bundle.with_file("a", "9").items()) == [("a", "9"), ("b", "2")]
    assert list(bundle.with_file("c", "3")) == ["a", "b", "c"]
    assert bundle["a"] == "1"


def test_encoded_is_utf8() -> None:
    assert Bundle([("a", "é\n")]).encoded("a") == "é\n".encode()


@pytest.mark.parametrize(
    "path", ["", "/etc/passwd", "../up.py", "a/../b", "./a", "a//b", "a\\b", "a/", "."]
)
def test_bundle_refuses_paths_outside_or_unnormalized(path: str) -> None:
    with pytest.raises(BundlePathError):
        Bundle([(path, "x")])


def test_bundle_refuses_duplicates() -> None:
    with pytest.raises(BundlePathError, match="duplicate"):
        Bundle([("a", "1"), ("a", "2")])


def test_registry_returns_the_name_and_renders_sorted_grouped_deduplicated_imports() -> None:
    imports = ImportRegistry()
    assert imports.use("specwire.runtime.wiring", "wire_memory") == "wire_memory"
    imports.use("specwire.runtime.hosts.cli", "run_cli")
    imports.use("pathlib", "Path")
    imports.use("specwire.runtime.wiring", "MemoryDeps")
    imports.use("specwire.runtime.wiring", "wire_memory")
    imports.use("collections.abc", "Sequence")
    assert imports.render() == (
        "from collections.abc import Sequence\n"
        "from pathlib import Path\n"
        "\n"
        "from specwire.runtime.hosts.cli import run_cli\n"
        "from specwire.runtime.wiring import MemoryDeps, wire_memory"
    )


def test_registry_order_of_use_does_not_matter() -> None:
    first, second = ImportRegistry(), ImportRegistry()
    pairs = [("runtime.b", "y"), ("runtime.a", "x"), ("os", "path"), ("runtime.b", "a")]
    for module, name in pairs:
        first.use(module, name)
    for module, name in reversed(pairs):
        second.use(module, name)
    assert first.render() == second.render()


def test_empty_registry_renders_nothing() -> None:
    assert ImportRegistry().render() == ""


def test_registry_refuses_a_name_from_two_modules_and_bad_input() -> None:
    imports = ImportRegistry()
    imports.use("runtime.a", "thing")
    with pytest.raises(ImportConflictError):
        imports.use("runtime.b", "thing")
    with pytest.raises(ValueError):
        imports.use("runtime.a", "not a name")
    with pytest.raises(ValueError):
        imports.use("runtime..a", "x")
