"""`ir` may not import the runtime, so a few vocabularies exist on both sides: they must agree."""

from __future__ import annotations

from ir import constants
from runtime.builtin_tools import BUILTIN_TOOL_NAMES
from runtime.facts.wiring import KNOWN_BACKENDS
from runtime.tenancy import TENANT_ID_RE


def test_builtin_tool_names_agree() -> None:
    assert sorted(constants.BUILTIN_TOOLS) == sorted(BUILTIN_TOOL_NAMES)


def test_memory_backends_agree() -> None:
    assert sorted(constants.KNOWN_BACKENDS) == sorted(KNOWN_BACKENDS)


def test_tenant_id_patterns_agree() -> None:
    samples = ["acme", "tenant-acme", "a", "A_b-9", "-x", "_x", "x" * 64, "x" * 65, "", "a b"]
    for sample in samples:
        compiler = constants.TENANT_ID_RE.fullmatch(sample) is not None
        runtime = TENANT_ID_RE.fullmatch(sample) is not None
        assert compiler == runtime, sample
