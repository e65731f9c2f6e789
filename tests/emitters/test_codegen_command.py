"""The codegen command: build / check / diff / fragment / schema / run, and its exit statuses."""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from emitter_cases import EXAMPLES_DIR
from hypothesis import given, settings
from hypothesis import strategies as st

import specwire.emitters.registry as registry
import specwire.emitters.writer as writer
from specwire.emitters.command import codegen, run_agent_source
from specwire.ir import load_spec, lower, spec_json_schema
from specwire.runtime.core.fragment import (
    PRE_SCOPES_FRAGMENT_VERSION,
    SPECWIRE_VERSION,
    storage_name,
)

SUPPORT = EXAMPLES_DIR / "support-bot.yaml"
PLAIN = EXAMPLES_DIR / "cli-plain.yaml"
BAD = """\
name: bad
target: cli
agent:
  model: scripted
  instructions: hi
memory:
  recallK: 80
"""


def invoke(*args: str | Path, env: dict[str, str] | None = None) -> Result:
    return CliRunner().invoke(codegen, [str(a) for a in args], env=env)


def files_under(path: Path) -> dict[str, bytes]:
    return {p.relative_to(path).as_posix(): p.read_bytes() for p in path.rglob("*") if p.is_file()}


def test_build_writes_each_spec_under_out_by_name(tmp_path: Path) -> None:
    result = invoke("build", SUPPORT, PLAIN, "--out", tmp_path / "out")
    assert result.exit_code == 0, result.output
    assert sorted(files_under(tmp_path / "out")) == [
        "cli-plain/README.md",
        "cli-plain/agent.py",
        "support-bot/README.md",
        "support-bot/agent.py",
    ]
    assert result.output.splitlines() == [
        f"{tmp_path / 'out' / 'support-bot'}: 2 written, 0 unchanged",
        f"{tmp_path / 'out' / 'cli-plain'}: 2 written, 0 unchanged",
    ]


def test_build_defaults_to_build_dir_in_cwd(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert invoke("build", SUPPORT).exit_code == 0
    assert (tmp_path / "build" / "support-bot" / "agent.py").is_file()


def test_second_build_rewrites_nothing(tmp_path: Path) -> None:
    assert invoke("build", SUPPORT, "--out", tmp_path).exit_code == 0
    bundle = tmp_path / "support-bot"
    before = {p.name: p.stat().st_mtime_ns for p in bundle.iterdir()}
    result = invoke("build", SUPPORT, "--out", tmp_path)
    assert result.exit_code == 0
    assert result.output.strip().endswith("0 written, 2 unchanged")
    assert {p.name: p.stat().st_mtime_ns for p in bundle.iterdir()} == before


def test_check_exits_1_on_drift_and_0_when_unchanged(tmp_path: Path) -> None:
    assert invoke("build", SUPPORT, "--out", tmp_path).exit_code == 0
    clean = invoke("build", SUPPORT, "--out", tmp_path, "--check")
    assert clean.exit_code == 0
    assert clean.output == f"ok {tmp_path / 'support-bot'}\n"

    agent = tmp_path / "support-bot" / "agent.py"
    agent.write_text(agent.read_text(encoding="utf-8") + "# edited\n", encoding="utf-8")
    edited = agent.read_bytes()
    drifted = invoke("build", SUPPORT, "--out", tmp_path, "--check")
    assert drifted.exit_code == 1
    assert drifted.output == f"drift {tmp_path / 'support-bot'}: agent.py (changed)\n"
    assert agent.read_bytes() == edited  # --check writes nothing


def test_check_on_a_missing_bundle_is_drift_and_creates_nothing(tmp_path: Path) -> None:
    result = invoke("build", SUPPORT, "--out", tmp_path / "out", "--check")
    assert result.exit_code == 1
    assert "agent.py (missing)" in result.output
    assert not (tmp_path / "out").exists()


def test_diff_prints_the_change_and_writes_nothing(tmp_path: Path) -> None:
    assert invoke("build", SUPPORT, "--out", tmp_path).exit_code == 0
    readme = tmp_path / "support-bot" / "README.md"
    readme.write_text("stale\n", encoding="utf-8")
    result = invoke("build", SUPPORT, "--out", tmp_path, "--diff")
    assert result.exit_code == 0
    assert f"--- a/{tmp_path}/support-bot/README.md\n" in result.output
    assert "-stale\n" in result.output
    assert "+# support-bot\n" in result.output
    assert readme.read_text(encoding="utf-8") == "stale\n"
    assert invoke("build", SUPPORT, "--out", tmp_path, "--diff", "--check").exit_code == 1


def test_spec_error_exits_2_with_locations_and_writes_nothing(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(BAD, encoding="utf-8")
    out = tmp_path / "out"
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "specwire.emitters.command",
            "build",
            str(SUPPORT),
            str(bad),
            "--out",
            str(out),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 2
    assert result.stderr == f"{bad}:7:12: memory.recallK: must be between 1 and 50 (got 80)\n"
    assert "Traceback" not in result.stderr
    assert result.stdout == ""
    assert not out.exists()  # not even the valid spec's bundle


def test_every_issue_of_every_spec_is_printed(tmp_path: Path) -> None:
    one = tmp_path / "one.yaml"
    one.write_text(BAD + "bogus: 1\n", encoding="utf-8")
    two = tmp_path / "two.yaml"
    two.write_text("- not a mapping\n", encoding="utf-8")
    result = invoke("check", one, two, tmp_path / "missing.yaml")
    assert result.exit_code == 2
    lines = result.output.splitlines()  # CliRunner mixes stderr in
    assert lines[0].startswith(f"{one}:7:12: memory.recallK:")
    assert lines[1].startswith(f"{one}:8:1: bogus:")
    assert lines[2].startswith(f"{two}:1:1:")
    assert lines[3].startswith(f"{tmp_path / 'missing.yaml'}:1:1:")


def test_a_blocked_destination_is_a_clean_error_and_nothing_is_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "collide" / "support-bot" / "agent.py").mkdir(parents=True)
    result = invoke("build", PLAIN, SUPPORT, "--out", "collide")
    assert result.exit_code == 2
    assert result.output == (
        "codegen: cannot write collide/support-bot/agent.py: a directory is in the way\n"
    )
    assert not (tmp_path / "collide" / "cli-plain").exists()  # the earlier spec: not written
    assert not (tmp_path / "collide" / "support-bot" / "README.md").exists()


def test_a_file_where_the_output_directory_goes_is_a_clean_error(tmp_path: Path) -> None:
    blocker = tmp_path / "blocker"
    blocker.write_text("not a directory\n", encoding="utf-8")
    result = invoke("build", PLAIN, "--out", blocker / "out")
    assert result.exit_code == 2
    assert result.output == (
        f"codegen: cannot write {blocker / 'out' / 'cli-plain' / 'agent.py'}: "
        f"{blocker} is not a directory\n"
        f"codegen: cannot write {blocker / 'out' / 'cli-plain' / 'README.md'}: "
        f"{blocker} is not a directory\n"
    )
    assert blocker.read_text(encoding="utf-8") == "not a directory\n"


def test_an_unwritable_output_directory_is_a_clean_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    locked = tmp_path / "locked"
    locked.mkdir()
    monkeypatch.setattr(writer, "_writable", lambda directory: directory != locked)
    result = invoke("build", PLAIN, SUPPORT, "--out", locked)
    assert result.exit_code == 2
    assert all(line.endswith(f": {locked} is not writable") for line in result.output.splitlines())
    assert list(locked.iterdir()) == []


def test_an_os_error_while_writing_is_a_clean_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = writer._atomic_write

    def fill_up(path: Path, data: bytes) -> None:
        if path.parent.name == "support-bot":
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        real(path, data)

    monkeypatch.setattr(writer, "_atomic_write", fill_up)
    monkeypatch.delenv("SPECWIRE_DEBUG", raising=False)
    result = invoke("build", PLAIN, SUPPORT, "--out", tmp_path)
    assert result.exit_code == 2
    assert result.output.splitlines() == [
        f"{tmp_path / 'cli-plain'}: 2 written, 0 unchanged",
        f"codegen: cannot write {tmp_path / 'support-bot' / 'agent.py'}: No space left on device",
    ]
    assert not list(tmp_path.rglob("*.tmp"))


def test_build_help_says_diff_does_not_gate() -> None:
    result = invoke("build", "--help")
    assert result.exit_code == 0
    text = " ".join(result.output.split())
    assert "exits 0 even when something would change (use --check to fail on drift)" in text


def test_two_specs_with_one_name_are_refused(tmp_path: Path) -> None:
    copy = tmp_path / "copy.yaml"
    copy.write_text(SUPPORT.read_text(encoding="utf-8"), encoding="utf-8")
    result = invoke("build", SUPPORT, copy, "--out", tmp_path / "out")
    assert result.exit_code == 2
    assert "is also the name of" in result.output
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ('".."', 'must not be only dots and spaces: it names the bundle\'s directory (got "..")'),
        ('" "', 'must not be only dots and spaces: it names the bundle\'s directory (got " ")'),
        (
            "' bot'",
            'must not start or end with a space: it names the bundle\'s directory (got " bot")',
        ),
    ],
    ids=["dots", "a-space", "leading-space"],
)
@pytest.mark.parametrize("subcommand", ["build", "check", "fragment"])
def test_a_name_that_cannot_name_a_directory_is_refused_at_its_position_by_every_command(
    tmp_path: Path, subcommand: str, name: str, message: str
) -> None:
    spec = tmp_path / "spec.yaml"
    spec.write_text(PLAIN.read_text(encoding="utf-8").replace("name: cli-plain", f"name: {name}"))
    line = next(
        number
        for number, text in enumerate(spec.read_text(encoding="utf-8").splitlines(), 1)
        if text.startswith("name:")
    )
    out = tmp_path / "out"
    args = ("--out", out) if subcommand == "build" else ()
    result = invoke(subcommand, spec, *args)
    assert result.exit_code == 2
    assert result.output == f"{spec}:{line}:7: name: {message}\n"
    assert not out.exists()


def test_check_validates_and_prints_ok() -> None:
    result = invoke("check", SUPPORT, PLAIN)
    assert result.exit_code == 0
    assert result.output == f"ok {SUPPORT}\nok {PLAIN}\n"


def test_fragment_prints_the_lowered_fragment_as_pretty_json() -> None:
    result = invoke("fragment", SUPPORT)
    assert result.exit_code == 0
    assert json.loads(result.output) == lower(load_spec(SUPPORT)).to_data()
    assert result.output.startswith('{\n  "spec_name": "support-bot",\n  "version": ')
    assert json.loads(invoke("fragment", PLAIN).output) == {
        "spec_name": "cli-plain",
        "version": PRE_SCOPES_FRAGMENT_VERSION,
        "specwire": SPECWIRE_VERSION,
    }


def test_schema_prints_the_spec_json_schema_with_sorted_keys() -> None:
    result = invoke("schema")
    assert result.exit_code == 0
    assert json.loads(result.output) == spec_json_schema()
    assert result.output == json.dumps(spec_json_schema(), indent=2, sort_keys=True) + "\n"


def test_internal_error_is_one_line_and_exit_1(monkeypatch: pytest.MonkeyPatch) -> None:
    def explode(spec: object) -> None:
        raise RuntimeError("template exploded\nsecond line")

    monkeypatch.setattr(registry, "emit", explode)
    monkeypatch.delenv("SPECWIRE_DEBUG", raising=False)
    result = invoke("build", SUPPORT, "--check")
    assert result.exit_code == 1
    assert result.output == (
        "codegen: internal error: RuntimeError: template exploded "
        "(set SPECWIRE_DEBUG=1 for the traceback)\n"
    )
    debug = invoke("build", SUPPORT, "--check", env={"SPECWIRE_DEBUG": "1"})
    assert isinstance(debug.exception, RuntimeError)


def test_run_agent_source_runs_as_main_with_argv() -> None:
    source = (
        "import sys\n"
        "if __name__ == '__main__':\n"
        "    raise SystemExit(len(sys.argv[1:]) + (10 if sys.argv[1] == '--message' else 0))\n"
    )
    argv = list(sys.argv)
    assert run_agent_source(source, "x", ["--message", "hi"]) == 12
    assert sys.argv == argv
    assert run_agent_source("x = 1\n", "x", []) == 0
    assert run_agent_source("raise SystemExit('bye')\n", "x", []) == 1


def test_run_interprets_the_cli_example(tmp_path: Path) -> None:
    env = {**os.environ, "SPECWIRE_MODEL": "scripted", "HOME": str(tmp_path / "home")}
    env.pop("SPECWIRE_SCRIPT", None)
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "specwire.emitters.command",
            "run",
            str(SUPPORT),
            "--message",
            "hello",
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert "hello" in result.stdout
    assert list((tmp_path / ".specwire" / "sessions").glob("sess_*.jsonl"))
    assert (tmp_path / ".specwire" / "state" / "support-bot").is_dir()  # the wire_memory call ran
    assert not (tmp_path / "build").exists()  # no bundle written


def test_a_bundle_reads_its_secret_model_id_when_it_starts(tmp_path: Path) -> None:
    spec = tmp_path / "spec.yaml"
    text = PLAIN.read_text(encoding="utf-8")
    assert "model: scripted\n" in text
    spec.write_text(text.replace("model: scripted\n", "model: $DEMO_MODEL_ID\n"), encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("SPECWIRE_")}
    env["HOME"] = str(tmp_path / "home")

    def run(extra: dict[str, str]) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [
                sys.executable,
                "-m",
                "specwire.emitters.command",
                "run",
                str(spec),
                "--message",
                "hello",
            ],
            cwd=tmp_path,
            env={**env, **extra},
            capture_output=True,
            text=True,
            stdin=subprocess.DEVNULL,
            check=False,
        )

    missing = run({})
    assert missing.returncode == 2
    assert "environment variable is not set: DEMO_MODEL_ID (agent.model)" in missing.stderr
    assert "Traceback" not in missing.stderr and missing.stdout == ""
    done = run({"DEMO_MODEL_ID": "scripted/from-env"})
    assert done.returncode == 0, done.stderr
    assert "model $DEMO_MODEL_ID" in done.stderr and "hello" in done.stdout
    assert "from-env" not in done.stderr


@settings(max_examples=30, deadline=None)
@given(
    example=st.sampled_from(sorted(EXAMPLES_DIR.glob("*.yaml"))),
    line=st.integers(min_value=0, max_value=20),
    replacement=st.text(alphabet=st.characters(codec="utf-8"), max_size=40),
)
def test_mutated_specs_build_or_fail_cleanly(example: Path, line: int, replacement: str) -> None:
    lines = example.read_text(encoding="utf-8").splitlines()
    lines[min(line, len(lines) - 1)] = replacement
    with tempfile.TemporaryDirectory() as tmp:
        spec = Path(tmp) / "spec.yaml"
        spec.write_text("\n".join(lines) + "\n", encoding="utf-8", newline="")
        result = invoke("build", spec, "--out", Path(tmp) / "out")
        assert result.exception is None or isinstance(result.exception, SystemExit)
        assert result.exit_code in (0, 2), result.output
        if result.exit_code == 2:
            assert result.output.startswith(f"{spec}:"), result.output
            assert not (Path(tmp) / "out").exists()
        else:
            [bundle] = (Path(tmp) / "out").iterdir()
            assert sorted(p.name for p in bundle.iterdir()) == ["README.md", "agent.py"]


def test_a_name_that_is_not_a_plain_folder_name_gets_its_safe_storage_name(
    tmp_path: Path,
) -> None:
    spec = tmp_path / "svc.yaml"
    spec.write_text(
        "name: tenant svc:v1\ntarget: cli\nagent: {model: scripted, instructions: hi}\n",
        encoding="utf-8",
    )
    out = tmp_path / "out"
    result = invoke("build", str(spec), "--out", str(out))
    assert result.exit_code == 0, result.output
    [folder] = [p.name for p in out.iterdir()]
    assert folder == storage_name("tenant svc:v1")
    assert folder.startswith("tenant-svc-v1-") and " " not in folder and ":" not in folder
    assert 'SPEC_NAME = "tenant svc:v1"' in (out / folder / "agent.py").read_text()


def test_check_and_build_warn_on_stderr_of_thredz_on_crew_and_still_compile(
    tmp_path: Path,
) -> None:
    spec = tmp_path / "squad.yaml"
    spec.write_text(
        "name: squad\ntarget: crew\nmodel: scripted\nentry: r\n"
        "roles: {r: {instructions: i}}\nthredz: true\n",
        encoding="utf-8",
    )
    warning = (
        f"{spec}:6:1: thredz: warning: thredz is accepted but not wired on the crew target: "
        "memory stays local and Thredz's server is not started (cli, channel and managed wire it)"
    )
    checked = invoke("check", spec)
    assert checked.exit_code == 0
    assert (checked.stdout, checked.stderr) == (f"ok {spec}\n", f"{warning}\n")
    for _ in range(2):  # printed on every build: such a spec is not taken from the cache
        built = invoke("build", spec, "--out", str(tmp_path / "out"))
        assert built.exit_code == 0, built.output
        assert built.stderr == f"{warning}\n"
    assert "thredz" not in (tmp_path / "out" / "squad" / "agent.py").read_text(encoding="utf-8")
