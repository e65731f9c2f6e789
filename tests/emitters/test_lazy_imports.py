"""`codegen --help` and `codegen check` load no emitter dependency (libcst, black, jinja2), a
build never loads libcst (its checks run on the stdlib's ast), and a build served from the cache
loads not even the spec models; pydantic's plugin scan is off unless the user set
PYDANTIC_DISABLE_PLUGINS."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from emitter_cases import EXAMPLES_DIR

ROOT = Path(__file__).resolve().parents[2]
SUPPORT = EXAMPLES_DIR / "support-bot.yaml"
# Runs the command's real entry point, then prints which top-level modules it had loaded.
PROBE = """\
import atexit, os, sys
def report():
    names = sorted({name.split(".")[0] for name in sys.modules})
    print("@@loaded " + ",".join(names), file=sys.stderr)
    print("@@plugins " + os.environ.get("PYDANTIC_DISABLE_PLUGINS", "<unset>"), file=sys.stderr)
atexit.register(report)
from specwire.emitters.command import main
main(sys.argv[1:])
"""
EMITTER_DEPENDENCIES = {"libcst", "black", "jinja2"}


def probe(*args: str | Path, env: dict[str, str] | None = None) -> tuple[set[str], str]:
    base = {k: v for k, v in os.environ.items() if k != "PYDANTIC_DISABLE_PLUGINS"}
    done = subprocess.run(
        [sys.executable, "-c", PROBE, *map(str, args)],
        capture_output=True,
        text=True,
        check=False,
        cwd=ROOT,
        env={**base, **(env or {})},
    )
    assert done.returncode == 0, done.stderr
    lines = done.stderr.splitlines()
    loaded = next(line for line in lines if line.startswith("@@loaded "))
    plugins = next(line for line in lines if line.startswith("@@plugins "))
    return set(loaded.split(" ", 1)[1].split(",")), plugins.split(" ", 1)[1]


@pytest.mark.parametrize(
    "args",
    [("--help",), ("build", "--help"), ("check", SUPPORT)],
    ids=["help", "build-help", "check"],
)
def test_help_and_check_load_no_emitter_dependency(args: tuple[str | Path, ...]) -> None:
    loaded, _ = probe(*args)
    assert loaded & EMITTER_DEPENDENCIES == set()


def test_help_loads_no_spec_model_either() -> None:
    loaded, _ = probe("--help")
    assert loaded & {"pydantic", "ruamel", "ir"} == set()


def test_a_cached_build_loads_neither_emitters_nor_models(tmp_path: Path) -> None:
    first, _ = probe("build", SUPPORT, "--out", tmp_path)
    assert first >= {"black", "jinja2"}  # the first build compiles
    assert "libcst" not in first  # and verifies what it generated without libcst
    again, _ = probe("build", SUPPORT, "--out", tmp_path)
    assert again & (EMITTER_DEPENDENCIES | {"pydantic", "ruamel"}) == set()


@pytest.mark.parametrize("stem", ["support-bot", "cli-plain"], ids=["memory", "memoryless"])
def test_a_build_verifies_without_libcst(tmp_path: Path, stem: str) -> None:
    """Both memory modes run their checks (one wire_memory call site; no memory names) on every
    build, with the stdlib: libcst's import alone cost 170-300 ms of a cold build."""
    loaded, _ = probe("build", EXAMPLES_DIR / f"{stem}.yaml", "--out", tmp_path)
    assert {"black", "jinja2"} <= loaded
    assert "libcst" not in loaded
    assert (tmp_path / stem / "agent.py").is_file()


def test_the_plugin_scan_is_off_unless_the_user_decided() -> None:
    assert probe("check", SUPPORT)[1] == "__all__"
    assert probe("check", SUPPORT, env={"PYDANTIC_DISABLE_PLUGINS": "logfire"})[1] == "logfire"
