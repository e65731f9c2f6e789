"""The benchmarks are scripts a person runs: a bad argument is a usage error, not a traceback."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_recall_bench_refuses_a_missing_dir(tmp_path: Path) -> None:
    missing = tmp_path / "not-there"
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "recall_bench.py"), "--dir", str(missing)],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert f"--dir {missing}: not an existing directory" in done.stderr
    assert not missing.exists()


def test_turn_wiring_bench_refuses_a_missing_dir_and_a_missing_spec(tmp_path: Path) -> None:
    script = str(ROOT / "bench" / "turn_wiring_bench.py")
    for args, message in (
        (["--dir", str(tmp_path / "not-there")], "not an existing directory"),
        (["--spec", str(tmp_path / "none.yaml")], "not a file"),
    ):
        done = subprocess.run(
            [sys.executable, script, *args],
            capture_output=True,
            text=True,
            check=False,
            timeout=60,
        )
        assert done.returncode == 2
        assert "Traceback" not in done.stderr
        assert message in done.stderr


def test_provider_bench_refuses_bad_arguments_before_starting_anything(tmp_path: Path) -> None:
    script = str(ROOT / "bench" / "provider_bench.py")
    for args, message in (
        (["--dir", str(tmp_path / "not-there")], "not an existing directory"),
        (["--only", "recall,nope"], "--only takes some of"),
        (["--proc-writes", "0"], "--proc-writes must be at least 1"),
        (["--keep", str(tmp_path / "kept")], "--keep takes --only recall"),
    ):
        done = subprocess.run(
            [sys.executable, script, *args],
            capture_output=True,
            text=True,
            check=False,
            timeout=60,
        )
        assert done.returncode == 2
        assert "Traceback" not in done.stderr
        assert message in done.stderr
