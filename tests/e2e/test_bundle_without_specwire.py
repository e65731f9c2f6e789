"""A bundle run by a Python without specwire, or with a specwire older than the bundle, says in
one line what to install (it raised a ModuleNotFoundError, or an ImportError, traceback)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from specwire.emitters.format import format_python
from specwire.emitters.imports import ImportRegistry
from specwire.emitters.pipeline import PY_HEADER_TEMPLATE, header_lines
from specwire.emitters.registry import emit
from specwire.emitters.render import render
from specwire.ir.load import load_spec_bytes
from specwire.runtime.core.fragment import SPECWIRE_VERSION

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@pytest.mark.parametrize(
    "example", ["cli-plain", "ops-notes", "channel-plain", "managed-plain", "research-plain"]
)
def test_a_python_without_specwire_is_told_what_to_install(example: str, tmp_path: Path) -> None:
    spec = EXAMPLES / f"{example}.yaml"
    agent = tmp_path / "agent.py"
    agent.write_text(emit(load_spec_bytes(spec.read_bytes(), str(spec)))["agent.py"])
    # -I: no PYTHONPATH, no user site; -S: no site-packages. The standard library only.
    done = subprocess.run(
        [sys.executable, "-I", "-S", str(agent), "--message", "hello"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 1 and done.stdout == ""
    [line] = done.stderr.splitlines()
    assert line.startswith(f"this agent needs specwire {SPECWIRE_VERSION} or newer")
    assert "pip install /path/to/specwire-checkout" in line
    assert f"pip install specwire-{SPECWIRE_VERSION}-py3-none-any.whl" in line
    assert not (tmp_path / ".specwire").exists()


@pytest.mark.parametrize("example", ["cli-plain", "channel-plain", "managed-plain"])
def test_a_bundle_newer_than_the_installed_specwire_says_so(example: str, tmp_path: Path) -> None:
    """A newer release's bundle imports a name this release's interface does not have yet."""
    spec = EXAMPLES / f"{example}.yaml"
    built = emit(load_spec_bytes(spec.read_bytes(), str(spec)))["agent.py"]
    opening = "    from specwire.runtime.bundle import (\n"
    assert opening in built
    agent = tmp_path / "agent.py"
    agent.write_text(built.replace(opening, opening + "        NameFromANewerRelease,\n", 1))
    done = subprocess.run(
        [sys.executable, str(agent), "--message", "hello"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 1 and done.stdout == ""
    [line] = done.stderr.splitlines()
    assert line.startswith(f"this agent needs specwire {SPECWIRE_VERSION} or newer")
    assert not (tmp_path / ".specwire").exists()


def test_the_guarded_header_renders_black_stable() -> None:
    imports = ImportRegistry()
    for name in ("run_cli", "MemoryDeps"):
        imports.use("specwire.runtime.bundle", name)
    imports.use("pathlib", "Path")
    context = {
        "imports": imports,
        "header_lines": header_lines("x", "cli"),
        "specwire_version": SPECWIRE_VERSION,
    }
    header = render(PY_HEADER_TEMPLATE, context).rstrip() + "\n"
    assert "except ImportError as missing:" in header
    assert format_python(header) == header
