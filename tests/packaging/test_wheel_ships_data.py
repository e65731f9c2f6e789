"""A wheel install works, not only an editable one: templates, skills and commands ship as data,
every example builds and its bundle runs from the wheel's files alone, and the console scripts
keep their names.

The wheel is built from the checkout, unpacked into a temp dir and used from there by a fresh
interpreter that cannot see the editable install.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DATA_GLOBS = (
    "templates/**/*.j2",
    "templates/compiled/*.py",
    "templates/compiled/*.json",
    "runtime/skills/builtin/**/*.md",
    "runtime/console/static/*.css",
)

PROBE = """
import sys
sys.meta_path[:] = [f for f in sys.meta_path if "editable" not in type(f).__module__.lower()]
sys.path_hooks[:] = [h for h in sys.path_hooks if "editable" not in repr(h).lower()]
sys.path[:] = [p for p in sys.path if "__editable__" not in p]
sys.path.insert(0, sys.argv[1])
import specwire.runtime, specwire.emitters.command
assert specwire.runtime.__file__.startswith(sys.argv[1]), specwire.runtime.__file__
from specwire.runtime.skills.loader import CONTINUITY_COMMANDS, load_commands
from pathlib import Path
assert set(load_commands(CONTINUITY_COMMANDS, cwd=Path(sys.argv[3]), home_dir=None)) == set(
    CONTINUITY_COMMANDS
)
sys.argv = ["codegen", "build", sys.argv[2], "--out", sys.argv[3]]
specwire.emitters.command.main()
"""


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    # Built from a copy of the tracked files: setuptools builds in ./build, which a parallel
    # worker or an earlier build (stale modules from another layout) would share.
    source = tmp_path_factory.mktemp("source")
    tracked = subprocess.run(
        ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True
    ).stdout.decode()
    for name in filter(None, tracked.split("\0")):
        origin, copy = ROOT / name, source / name
        copy.parent.mkdir(parents=True, exist_ok=True)
        if origin.is_symlink():
            copy.symlink_to(os.readlink(origin))
        elif origin.is_file():
            shutil.copy2(origin, copy)
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q"]
        + ["-w", str(out), str(source)],
        check=True,
        capture_output=True,
    )
    [built] = sorted(out.glob("specwire-*.whl"))
    return built


def test_every_data_file_is_in_the_wheel(wheel: Path) -> None:
    expected = {
        f"specwire/{path.relative_to(ROOT).as_posix()}"
        for pattern in DATA_GLOBS
        for path in ROOT.glob(pattern)
    }
    assert any(name.startswith("specwire/templates/") for name in expected)
    names = set(zipfile.ZipFile(wheel).namelist())
    assert expected - names == set()


def test_the_unpacked_wheel_builds_a_bundle(wheel: Path, tmp_path: Path) -> None:
    unpacked = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(unpacked)
    out = tmp_path / "out"
    result = subprocess.run(
        [sys.executable, "-c", PROBE, str(unpacked), str(ROOT / "examples" / "support-bot.yaml")]
        + [str(out)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr
    assert sorted(p.name for p in out.rglob("agent.py"))


def test_the_wheel_installs_one_top_level_package(wheel: Path) -> None:
    names = zipfile.ZipFile(wheel).namelist()
    tops = {
        name.split("/", 1)[0] for name in names if not name.split("/", 1)[0].endswith(".dist-info")
    }
    assert tops == {"specwire"}


def test_pyproject_lists_every_package_folder() -> None:
    """setuptools maps folders to ``specwire.*`` by an explicit list: a new folder must join it."""
    import tomllib

    listed = set(
        tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]
    )
    on_disk = {
        "specwire." + ".".join(init.parent.relative_to(ROOT).parts)
        for top in ("ir", "emitters", "runtime", "templates")
        for init in (ROOT / top).rglob("__init__.py")
    }
    assert listed == on_disk


def _console_scripts(wheel: Path) -> dict[str, str]:
    import configparser

    archive = zipfile.ZipFile(wheel)
    [entry_points] = [n for n in archive.namelist() if n.endswith(".dist-info/entry_points.txt")]
    parser = configparser.ConfigParser()
    parser.read_string(archive.read(entry_points).decode())
    return dict(parser["console_scripts"])


def test_the_console_scripts_keep_their_names(wheel: Path) -> None:
    assert set(_console_scripts(wheel)) == {"codegen", "specwire-memory", "specwire-memory-server"}


# A Python with the unpacked wheel and the standard library only (-I -S: no site-packages),
# running a console script's entry as its launcher would.
BARE_SCRIPT = """
import importlib, sys
sys.path.insert(0, sys.argv[1])
module, _, function = sys.argv[2].partition(":")
sys.argv = [sys.argv[3]]
raise SystemExit(getattr(importlib.import_module(module), function)())
"""


def test_the_memory_server_without_the_serve_extra_says_what_to_install(
    wheel: Path, tmp_path: Path
) -> None:
    unpacked = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(unpacked)
    entry = _console_scripts(wheel)["specwire-memory-server"]
    done = subprocess.run(
        [sys.executable, "-I", "-S", "-c", BARE_SCRIPT, str(unpacked), entry]
        + ["specwire-memory-server"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr == (
        "specwire-memory-server needs starlette, uvicorn: pip install 'specwire[serve]'\n"
    )


# A Python that cannot see the editable install or the checkout (argv[1]: the unpacked wheel,
# argv[2]: the checkout), as a user's venv with the wheel installed sees specwire.
WHEEL_ONLY = """
import sys
root = sys.argv[2]
sys.meta_path[:] = [f for f in sys.meta_path if "editable" not in type(f).__module__.lower()]
sys.path_hooks[:] = [h for h in sys.path_hooks if "editable" not in repr(h).lower()]
sys.path[:] = [
    p for p in sys.path
    if p and "__editable__" not in p and (not p.startswith(root) or p.startswith(sys.prefix))
]  # the checkout's folders go; a virtual environment inside it (as CI makes one) stays
sys.path.insert(0, sys.argv[1])
import specwire.runtime
assert specwire.runtime.__file__.startswith(sys.argv[1]), specwire.runtime.__file__
"""
# `codegen build SPEC --out OUT` (argv[3:]) there.
BUILD = (
    WHEEL_ONLY
    + """
import specwire.emitters.command
sys.argv = ["codegen", "build", *sys.argv[3:]]
specwire.emitters.command.main()
"""
)
# `python agent.py ARGS` (argv[3], argv[4:]) there: the bundle's folder first on sys.path.
RUN_BUNDLE = (
    WHEEL_ONLY
    + """
import runpy
agent, sys.argv = sys.argv[3], sys.argv[3:]
sys.path.insert(0, agent.rsplit("/", 1)[0])
runpy.run_path(agent, run_name="__main__")
"""
)
# Examples whose memory is a service the test would have to start (their e2e tests do).
NEEDS_A_SERVICE = {"cli-memory-service", "managed-postgres"}


def _one_shot(spec: Path) -> list[str]:
    """A one-shot run of the example's target on the scripted model."""
    import re

    text = spec.read_text(encoding="utf-8")
    [target] = re.findall(r"^target: *(\w+)", text, re.MULTILINE)
    remember = "remember: the billing plan is Enterprise"
    if target == "channel":
        return ["console", "--message", f"thread-1: {remember}"]
    if target == "managed":
        tenant = re.findall(r"^  - id: *(\S+)", text, re.MULTILINE)[0]
        return ["console", "--message", f"{tenant}/desk: {remember}"]
    if target == "research":
        return []
    return ["--message", remember]


def test_every_example_builds_and_runs_from_the_wheel(wheel: Path, tmp_path: Path) -> None:
    unpacked = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(unpacked)
    examples = sorted((ROOT / "examples").glob("*.yaml"))
    assert len(examples) > 10
    env = {k: v for k, v in os.environ.items() if not k.startswith("SPECWIRE_")}
    failed = []
    for spec in examples:
        if spec.stem in NEEDS_A_SERVICE:
            continue
        out, work = tmp_path / "out", tmp_path / "work" / spec.stem
        work.mkdir(parents=True)
        wheel_only = [sys.executable, "-c"]
        built = subprocess.run(
            [*wheel_only, BUILD, str(unpacked), str(ROOT), str(spec), "--out", str(out)],
            capture_output=True,
            text=True,
            cwd=work,
        )
        agent = out / spec.stem / "agent.py"
        if built.returncode != 0 or not agent.is_file():
            failed.append(f"{spec.name}: build: {built.stderr.strip()[-300:]}")
            continue
        ran = subprocess.run(
            [*wheel_only, RUN_BUNDLE, str(unpacked), str(ROOT), str(agent), *_one_shot(spec)],
            capture_output=True,
            text=True,
            cwd=work,
            stdin=subprocess.DEVNULL,
            env=env | {"HOME": str(work)},
            timeout=300,  # a run that hangs fails here; nothing is timed
        )
        if ran.returncode != 0 or not ran.stdout.strip():
            failed.append(f"{spec.name}: run ({ran.returncode}): {ran.stderr.strip()[-300:]}")
    assert failed == []
