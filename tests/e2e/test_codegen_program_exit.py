"""``codegen build`` and ``check`` run as the program (``main()`` without argv, as the console
script calls it) pause the garbage collector and end with ``os._exit``: the same bundles, lines
and exit statuses as the command run in-process, and nothing lost from a piped stdout."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

from specwire.emitters.command import codegen

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
# The console script's call, plus an atexit handler: os._exit skips it, a normal exit runs it.
PROGRAM = """\
import atexit, sys
atexit.register(lambda: print("@@atexit", file=sys.stderr))
from specwire.emitters.command import main
main()
"""


def program(*args: str | Path, prelude: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", prelude + PROGRAM, *map(str, args)],
        capture_output=True,
        text=True,
        check=False,
        cwd=ROOT,
        timeout=120,
    )


def files(folder: Path) -> dict[str, bytes]:
    return {
        path.relative_to(folder).as_posix(): path.read_bytes()
        for path in sorted(folder.rglob("*"))
        if path.is_file()
    }


def test_a_build_writes_what_the_in_process_command_writes(tmp_path: Path) -> None:
    specs = [EXAMPLES / "support-bot.yaml", EXAMPLES / "cli-plain.yaml"]
    done = program("build", *specs, "--out", tmp_path / "program", "--no-cache")
    assert done.returncode == 0, done.stderr
    assert "@@atexit" not in done.stderr  # ended by os._exit
    written = [line for line in done.stdout.splitlines() if line.endswith("0 unchanged")]
    assert len(written) == 2  # both lines reached the pipe
    inside = CliRunner().invoke(
        codegen, ["build", *map(str, specs), "--out", str(tmp_path / "inside"), "--no-cache"]
    )
    assert inside.exit_code == 0, inside.output
    assert files(tmp_path / "program") == files(tmp_path / "inside")
    assert files(tmp_path / "program")  # something was compared


def test_a_build_with_workers_writes_the_same(tmp_path: Path) -> None:
    specs = [EXAMPLES / "support-bot.yaml", EXAMPLES / "cli-plain.yaml"]
    one = program("build", *specs, "--out", tmp_path / "one", "--no-cache")
    two = program("build", *specs, "--out", tmp_path / "two", "--no-cache", "--jobs", "2")
    assert one.returncode == two.returncode == 0, one.stderr + two.stderr
    assert files(tmp_path / "one") == files(tmp_path / "two")


def test_spec_errors_keep_their_lines_and_exit_status(tmp_path: Path) -> None:
    spec = tmp_path / "bad.yaml"
    spec.write_text("name: bad\nversion: 1\ntarget: cli\nagent: {model: 3}\n", encoding="utf-8")
    for command in (["build", spec, "--out", tmp_path / "out"], ["check", spec]):
        done = program(*command)
        assert done.returncode == 2
        assert f"{spec}:4:16: agent.model: expected a string (got 3)" in done.stderr
        assert "@@atexit" not in done.stderr
    assert not (tmp_path / "out").exists()


def test_check_prints_its_line_and_other_commands_exit_as_usual() -> None:
    done = program("check", EXAMPLES / "support-bot.yaml")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"ok {EXAMPLES / 'support-bot.yaml'}"
    helped = program("--help")
    assert helped.returncode == 0
    assert "@@atexit" in helped.stderr  # only build and check end with os._exit


def test_a_program_started_without_stdout_still_builds(tmp_path: Path) -> None:
    # Python sets sys.stdout to None when the program starts with its stdout closed (`>&-`).
    done = program(
        "build",
        EXAMPLES / "support-bot.yaml",
        "--out",
        tmp_path,
        prelude="import sys\nsys.stdout = None\n",
    )
    assert done.returncode == 0, done.stderr
    assert "@@atexit" not in done.stderr
    assert (tmp_path / "support-bot" / "agent.py").is_file()
