"""Run the conformance suite on the built-in targets, or on yours:
``pytest tests/conformance --provider package.module:factory`` (a target as
``specwire.runtime.facts.conformance.target`` describes it)."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

# The cases live in the package and state their expectations with assert: rewrite them like
# test modules, so a failure shows the values compared.
pytest.register_assert_rewrite("specwire.runtime.facts.conformance")

from conformance_harness import FACTORIES  # noqa: E402


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--provider",
        action="store",
        default=None,
        metavar="MODULE:FACTORY",
        help="run tests/conformance against factory(workdir) -> target instead of the built-ins",
    )


def _load(spec: str) -> Callable[[Path], Any]:
    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr:
        raise pytest.UsageError(f"--provider must be MODULE:FACTORY (got {spec!r})")
    factory = getattr(importlib.import_module(module_name), attr, None)
    if not callable(factory):
        raise pytest.UsageError(f"--provider: {spec} is not a callable")
    return factory  # type: ignore[no-any-return]


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "target_factory" not in metafunc.fixturenames:
        return
    custom = metafunc.config.getoption("--provider", default=None)
    if custom:
        metafunc.parametrize("target_factory", [_load(custom)], ids=[custom])
    else:
        metafunc.parametrize("target_factory", list(FACTORIES.values()), ids=list(FACTORIES.keys()))


@pytest.fixture
def target(target_factory: Callable[[Path], Any], tmp_path: Path) -> Iterator[Any]:
    made = target_factory(tmp_path)
    try:
        yield made
    finally:
        made.close()
