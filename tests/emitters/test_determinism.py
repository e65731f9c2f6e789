"""Same spec bytes → same bundle bytes, under any PYTHONHASHSEED and from any directory."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from emitter_cases import EXAMPLES, ROOT

from specwire.emitters.bundle import Bundle


def tree(path: Path) -> dict[str, bytes]:
    return {p.relative_to(path).as_posix(): p.read_bytes() for p in path.rglob("*") if p.is_file()}


def start_build(
    cwd: Path, specs: list[str], out: str, seed: str, *extra: str
) -> subprocess.Popen[str]:
    cwd.mkdir(parents=True, exist_ok=True)
    return subprocess.Popen(
        [sys.executable, "-m", "specwire.emitters.command", "build", *specs, "--out", out, *extra],
        cwd=cwd,
        env={**os.environ, "PYTHONHASHSEED": seed},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def finish(build: subprocess.Popen[str]) -> None:
    _, stderr = build.communicate(timeout=120)
    assert build.returncode == 0, stderr


def in_process_paths(bundles: dict[str, Bundle]) -> list[str]:
    return [f"{stem}/{path}" for stem, bundle in bundles.items() for path in bundle]


def test_builds_are_byte_identical_across_seeds_and_directories(
    tmp_path: Path, example_bundles: dict[str, Bundle]
) -> None:
    # Run 1: absolute spec paths from the repository root. Run 2: a copy of the examples,
    # relative paths, another working directory, another hash seed and two worker processes.
    copies = tmp_path / "b" / "specs" / "nested"
    copies.mkdir(parents=True)
    for path in EXAMPLES:
        shutil.copyfile(path, copies / path.name)
    builds = [
        start_build(tmp_path / "a", [str(p) for p in EXAMPLES], "out-one", "0"),
        start_build(
            tmp_path / "b",
            [f"specs/nested/{p.name}" for p in EXAMPLES],
            "elsewhere/out",
            "1",
            "--jobs",
            "2",
        ),
    ]
    for build in builds:
        finish(build)
    first = tree(tmp_path / "a" / "out-one")
    second = tree(tmp_path / "b" / "elsewhere" / "out")
    assert sorted(first) == sorted(in_process_paths(example_bundles))
    assert first == second
    in_process = {
        f"{stem}/{path}": bundle.encoded(path)
        for stem, bundle in example_bundles.items()
        for path in bundle
    }
    assert first == in_process
    assert all(str(tmp_path).encode() not in data for data in first.values())
    assert all(str(ROOT).encode() not in data for data in first.values())
