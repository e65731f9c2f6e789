"""Generated bundles import cleanly and pass ``mypy --strict`` (one run over all of them)."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest
from emitter_cases import EXAMPLE_STEMS, MEMORY_EXAMPLES, ROOT

from specwire.emitters.bundle import Bundle
from specwire.emitters.registry import emit
from specwire.emitters.writer import write_bundle
from specwire.ir import load_spec_text
from specwire.runtime.core.fragment import MemoryWiringFragment

# Checks that mypy really resolves the runtime's types: this must fail with arg-type errors.
CANARY = """\
from pathlib import Path

from specwire.runtime.bundle import run_cli

status: str = run_cli(spec_name=1, model="m", instructions="i", build_session=None, cwd=Path())
"""


# Shapes no example uses, type-checked alongside the examples: model ids as secret references.
EXTRA_SPECS: dict[str, str] = {
    "secret_model_cli": "name: s\ntarget: cli\nagent: {model: $MODEL_ID, instructions: i}\n",
    "secret_model_crew": "name: s\ntarget: crew\nmodel: $MODEL_ID\nentry: a\n"
    "roles: {a: {instructions: x, model: $A_MODEL}, b: {instructions: y, model: scripted}}\n",
}


def module_name(stem: str) -> str:
    return "bundle_" + stem.replace("-", "_")


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory, example_bundles: dict[str, Bundle]) -> Path:
    out = tmp_path_factory.mktemp("bundles")
    for stem, bundle in example_bundles.items():
        write_bundle(bundle, out / stem)
    return out


@pytest.mark.parametrize("stem", EXAMPLE_STEMS)
def test_bundle_imports_without_running(stem: str, built: Path) -> None:
    path = built / stem / "agent.py"
    spec = importlib.util.spec_from_file_location(module_name(stem), path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # `if __name__ == "__main__"` stays closed
    assert callable(module.main)
    assert stem == module.SPEC_NAME
    fragment = getattr(module, "MEMORY_FRAGMENT", None)
    if stem in MEMORY_EXAMPLES:
        assert MemoryWiringFragment.model_validate(fragment).spec_name == stem
    else:
        assert fragment is None


def test_bundles_pass_mypy_strict(tmp_path: Path, built: Path) -> None:
    # One mypy run over every bundle: each agent.py is copied under a unique module name.
    check_dir = tmp_path / "check"
    check_dir.mkdir()
    for stem in EXAMPLE_STEMS:
        source = (built / stem / "agent.py").read_text(encoding="utf-8")
        (check_dir / f"{module_name(stem)}.py").write_text(source, encoding="utf-8")
    for name, text in EXTRA_SPECS.items():
        source = emit(load_spec_text(text, f"{name}.yaml"))["agent.py"]
        (check_dir / f"{module_name(name)}.py").write_text(source, encoding="utf-8")
    (check_dir / "canary.py").write_text(CANARY, encoding="utf-8")
    config = tmp_path / "mypy.ini"
    config.write_text("[mypy]\n", encoding="utf-8")
    # The runtime is installed editable (an import hook mypy cannot follow): point at the source.
    env = {**os.environ, "MYPYPATH": str(ROOT / ".typing")}
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--config-file",
            str(config),
            "--strict",
            "--python-version",
            "3.11",
            "--follow-imports",
            "silent",
            "--cache-dir",
            str(tmp_path / "mypy-cache"),
            "--no-error-summary",
            "--hide-error-context",
            ".",
        ],
        cwd=check_dir,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    errors = [line for line in result.stdout.splitlines() if ": error:" in line]
    assert all(line.startswith("canary.py:") for line in errors), result.stdout
    assert any("[arg-type]" in line for line in errors), result.stdout + result.stderr
    assert any("[assignment]" in line for line in errors), result.stdout
