"""`codegen check` and `codegen build` agree on hostile specs: the same located lines, exit 2, no
traceback, no internal error, and nothing written (not even the output folder)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

NAME_256 = "a" * 256
AGENT = "agent: {model: scripted, instructions: hi}\n"
HOSTILE: dict[str, tuple[str, str]] = {
    "name-256-characters": (
        f"name: {NAME_256}\ntarget: cli\n" + AGENT,
        "1:7: name: is 256 characters long: at most 128, because it names the bundle's directory "
        f'and its store files (got "{"a" * 39}…")',
    ),
    "lone-surrogate-in-model": (
        'name: s\ntarget: cli\nagent: {model: "m\\udc00", instructions: hi}\n',
        "3:16: agent.model: is not valid text: it contains a lone surrogate (U+DC00)",
    ),
    "nan-setting": (
        "name: s\ntarget: channel\n" + AGENT + "channels: {slack: {rate: .nan}}\n"
        "routing: {sessionKey: thread}\n",
        "4:26: channels.slack.rate: must be a finite number (got .nan)",
    ),
    "line-separator-in-a-key": (
        "name: s\ntarget: cli\n" + AGENT + 'memory: {"a\\u2028b": 1}\n',
        '4:10: memory."a\\u2028b": unknown key "a\\u2028b"',
    ),
    "windows-device-name": (
        "name: nul\ntarget: cli\n" + AGENT,
        '1:7: name: "nul" is a device name on Windows and cannot name the bundle\'s directory '
        "there; choose another name",
    ),
}


def codegen(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    """The real command in a real process (what a user sees, exit status included)."""
    env = {key: value for key, value in os.environ.items() if key != "SPECWIRE_DEBUG"}
    return subprocess.run(
        [sys.executable, "-m", "specwire.emitters.command", *map(str, args)],
        capture_output=True,
        text=True,
        check=False,
        cwd=cwd,
        env={**env, "PYTHONPATH": str(Path(__file__).resolve().parents[2] / ".typing")},
    )


@pytest.mark.parametrize(("text", "expected"), HOSTILE.values(), ids=HOSTILE.keys())
def test_check_and_build_refuse_alike_and_write_nothing(
    tmp_path: Path, text: str, expected: str
) -> None:
    spec = tmp_path / "spec.yaml"
    spec.write_text(text, encoding="utf-8")
    out = tmp_path / "out"
    checked = codegen("check", spec, cwd=tmp_path)
    built = codegen("build", spec, "--out", out, cwd=tmp_path)
    built_default = codegen("build", spec, cwd=tmp_path)
    for result in (checked, built, built_default):
        assert result.returncode == 2
        assert result.stderr == f"{spec}:{expected}\n"
        assert result.stdout == ""
    assert sorted(path.name for path in tmp_path.iterdir()) == ["spec.yaml"]


def test_a_too_long_folder_under_out_is_refused_before_anything_is_written(
    tmp_path: Path,
) -> None:
    spec = tmp_path / "spec.yaml"
    spec.write_text("name: s\ntarget: cli\n" + AGENT, encoding="utf-8")
    out = tmp_path / "out" / ("d" * 300)
    result = codegen("build", spec, "--out", out, cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr.startswith(f"codegen: cannot write {out / 's' / 'agent.py'}: the name ")
    assert result.stderr.endswith("is 300 bytes long: at most 255 fit here\n")
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr
    assert sorted(path.name for path in tmp_path.iterdir()) == ["spec.yaml"]


def test_ten_thousand_lines_of_instructions_check_and_build(tmp_path: Path) -> None:
    lines = "".join(f"    step {n}: be thorough\n" for n in range(10_000))
    spec = tmp_path / "spec.yaml"
    spec.write_text(
        "name: long\ntarget: cli\nagent:\n  model: scripted\n  instructions: |\n" + lines,
        encoding="utf-8",
    )
    assert codegen("check", spec, cwd=tmp_path).returncode == 0
    built = codegen("build", spec, "--out", tmp_path / "out", cwd=tmp_path)
    assert built.returncode == 0, built.stderr
    agent = (tmp_path / "out" / "long" / "agent.py").read_text(encoding="utf-8")
    assert "step 9999: be thorough\n" in agent
