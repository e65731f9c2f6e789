"""Colour and progress on a terminal only: piped output is plain, NO_COLOR is respected."""

from __future__ import annotations

import io
import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest
from emitter_cases import EXAMPLES, EXAMPLES_DIR

from specwire.emitters.terminal import ProgressLine, Style, wants_colour

ROOT = Path(__file__).resolve().parents[2]
BAD = "name: bad\ntarget: cli\nagent: {model: scripted, instructions: hi}\nmemory: {recallK: 80}\n"
ESC = "\x1b["


class FakeTty(io.StringIO):
    def isatty(self) -> bool:
        return True


def codegen_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "TERM")}
    return {**env, "PYTHONPATH": str(ROOT / ".typing"), "TERM": "xterm", **extra}


def run_on_a_terminal(*args: str | Path, env: dict[str, str]) -> tuple[int, str]:
    """Run codegen with stdout and stderr on a pseudo-terminal; what the terminal showed."""
    leader, follower = pty.openpty()
    try:
        done = subprocess.run(
            [sys.executable, "-m", "specwire.emitters.command", *map(str, args)],
            stdin=subprocess.DEVNULL,
            stdout=follower,
            stderr=follower,
            env=env,
            check=False,
            timeout=300,
        )
    finally:
        os.close(follower)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(leader)
    return done.returncode, b"".join(chunks).decode("utf-8", errors="replace")


def test_style_is_plain_off_a_terminal_and_with_no_color(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("TERM", "xterm")
    assert not wants_colour(io.StringIO())
    assert wants_colour(FakeTty())
    monkeypatch.setenv("NO_COLOR", "1")
    assert not wants_colour(FakeTty())
    monkeypatch.setenv("NO_COLOR", "")  # empty means unset (no-color.org)
    assert wants_colour(FakeTty())
    monkeypatch.setenv("TERM", "dumb")
    assert not wants_colour(FakeTty())


def test_a_located_error_keeps_its_text_when_painted() -> None:
    line = "spec.yaml:7:12: memory.recallK: must be between 1 and 50 (got 80)"
    assert Style(False).error(line) == line
    painted = Style(True).error(line)
    assert ESC in painted
    assert painted.replace("\x1b[0m", "").replace("\x1b[1m", "").replace("\x1b[31m", "") == line


def test_progress_is_silent_off_a_terminal() -> None:
    piped = io.StringIO()
    progress = ProgressLine(piped)
    progress(1, 3, "a.yaml")
    progress.clear()
    assert piped.getvalue() == ""
    tty = FakeTty()
    progress = ProgressLine(tty)
    progress(2, 10, "b.yaml")
    progress.clear()
    assert "[ 2/10] b.yaml" in tty.getvalue()


def test_piped_errors_and_output_are_plain(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(BAD, encoding="utf-8")
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "specwire.emitters.command",
            "build",
            EXAMPLES_DIR / "support-bot.yaml",
            bad,
        ],
        capture_output=True,
        text=True,
        check=False,
        env=codegen_env(),
        cwd=tmp_path,
    )
    assert done.returncode == 2
    assert done.stderr == f"{bad}:4:19: memory.recallK: must be between 1 and 50 (got 80)\n"
    ok = subprocess.run(
        [
            sys.executable,
            "-m",
            "specwire.emitters.command",
            "build",
            *EXAMPLES[:3],
            "--out",
            tmp_path,
        ],
        capture_output=True,
        text=True,
        check=False,
        env=codegen_env(),
    )
    assert ok.returncode == 0, ok.stderr
    assert ESC not in ok.stdout + ok.stderr
    assert ok.stderr == ""


def test_a_terminal_gets_colour_and_progress_unless_no_color(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(BAD, encoding="utf-8")
    status, shown = run_on_a_terminal("check", bad, env=codegen_env())
    assert status == 2
    assert ESC in shown and "memory.recallK" in shown
    status, shown = run_on_a_terminal("check", bad, env=codegen_env(NO_COLOR="1"))
    assert status == 2
    assert ESC not in shown
    status, shown = run_on_a_terminal(
        "build", *EXAMPLES[:3], "--out", tmp_path / "out", env=codegen_env(NO_COLOR="1")
    )
    assert status == 0
    assert "[1/3]" in shown and "[3/3]" in shown
