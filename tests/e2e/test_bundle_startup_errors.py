"""A bundle that cannot start says why in one line, exits 2, and changes nothing."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from specwire.runtime.core.fragment import (
    FRAGMENT_VERSION,
    PRE_SCOPES_FRAGMENT_VERSION,
    SPECWIRE_VERSION,
)

ROOT = Path(__file__).resolve().parents[2]


def build(spec: Path, out: Path) -> Path:
    done = subprocess.run(
        [sys.executable, "-m", "specwire.emitters.command", "build", str(spec), "--out", str(out)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    [agent] = sorted(out.rglob("agent.py"))
    return agent


def run(agent: Path, workdir: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SPECWIRE_")}
    env["HOME"] = str(workdir)
    return subprocess.run(
        [sys.executable, str(agent), "--message", "hello"],
        cwd=workdir,
        capture_output=True,
        text=True,
        env=env,
        check=False,
        stdin=subprocess.DEVNULL,
    )


def assert_clean_failure(done: subprocess.CompletedProcess[str], spec_name: str) -> str:
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert "Traceback" not in done.stderr
    [line] = [ln for ln in done.stderr.splitlines() if ln.startswith(f"{spec_name}: ")]
    return line


@pytest.mark.parametrize("example", ["support-bot", "cli-plain"])
def test_an_unusable_state_directory_is_a_clean_error(tmp_path: Path, example: str) -> None:
    agent = build(ROOT / "examples" / f"{example}.yaml", tmp_path / "out")
    workdir = tmp_path / "work"
    workdir.mkdir()
    (workdir / ".specwire").write_text("a file where the state directory should be\n")
    line = assert_clean_failure(run(agent, workdir), example)
    assert ".specwire" in line
    assert (workdir / ".specwire").read_text() == "a file where the state directory should be\n"


def test_a_corrupt_fact_store_is_reported_and_left_alone(tmp_path: Path) -> None:
    agent = build(ROOT / "examples" / "support-bot.yaml", tmp_path / "out")
    workdir = tmp_path / "work"
    facts = workdir / ".specwire" / "facts"
    facts.mkdir(parents=True)
    damaged = b"this is not a database, but it is someone's data" * 100
    (facts / "support-bot.sqlite3").write_bytes(damaged)
    line = assert_clean_failure(run(agent, workdir), "support-bot")
    assert "fact store" in line
    assert (facts / "support-bot.sqlite3").read_bytes() == damaged


def test_a_bundle_from_a_newer_specwire_says_which_version_it_needs(tmp_path: Path) -> None:
    agent = build(ROOT / "examples" / "support-bot.yaml", tmp_path / "out")
    source = agent.read_text(encoding="utf-8")
    # A cli bundle without scope keys carries the version before scopes.
    stamp = f'"version": {PRE_SCOPES_FRAGMENT_VERSION},\n    "specwire": "{SPECWIRE_VERSION}",'
    assert stamp in source
    newer = f'"version": {FRAGMENT_VERSION + 1},\n    "specwire": "9.1.0",\n    "wiki_v9": {{}},'
    agent.write_text(source.replace(stamp, newer), encoding="utf-8")
    workdir = tmp_path / "work"
    workdir.mkdir()
    line = assert_clean_failure(run(agent, workdir), "support-bot")
    assert "this bundle needs specwire 9.1.0 or newer" in line
    assert 'pip install "specwire>=9.1.0"' in line
    assert not (workdir / ".specwire").exists()


def test_help_touches_nothing(tmp_path: Path) -> None:
    agent = build(ROOT / "examples" / "support-bot.yaml", tmp_path / "out")
    workdir = tmp_path / "work"
    workdir.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("SPECWIRE_")}
    for args in (["--help"], ["--bogus"]):
        done = subprocess.run(
            [sys.executable, str(agent), *args],
            cwd=workdir,
            capture_output=True,
            text=True,
            env={**env, "HOME": str(workdir)},
            check=False,
        )
        assert done.returncode in (0, 2) and "usage:" in (done.stdout + done.stderr)
        assert "memory" not in done.stderr.lower()
        assert list(workdir.iterdir()) == []
