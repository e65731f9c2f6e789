"""Session fixtures for the emitter tests: every example's IR and bundle."""

from __future__ import annotations

import pytest
from emitter_cases import EXAMPLES

from specwire.emitters.bundle import Bundle
from specwire.emitters.registry import emit
from specwire.ir import IrSpec, load_spec


@pytest.fixture(scope="session")
def example_specs() -> dict[str, IrSpec]:
    return {path.stem: load_spec(path) for path in EXAMPLES}


@pytest.fixture(scope="session")
def example_bundles(example_specs: dict[str, IrSpec]) -> dict[str, Bundle]:
    """Every example's bundle, keyed by the example's file stem."""
    return {stem: emit(spec) for stem, spec in example_specs.items()}
