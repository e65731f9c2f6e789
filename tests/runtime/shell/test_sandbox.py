"""The sandbox behind ``bash``: what the shell sees, and what happens where none can be set up."""

from __future__ import annotations

import marshal
import subprocess
import sys
from pathlib import Path

import pytest

from specwire.runtime.core.tool_types import ToolContext
from specwire.runtime.tools.builtin import builtin_catalog
from specwire.runtime.tools.shell import sandbox
from specwire.runtime.tools.shell.host_code import launcher_command
from specwire.runtime.tools.shell.sandbox import (
    SandboxPolicy,
    SandboxUnavailableError,
    scrubbed_environment,
)

CTX = ToolContext("sess_0000000000000001", "tu_0000000000000001")


def run(work: Path, command: str) -> tuple[str, bool]:
    result = builtin_catalog(["bash"], work).get("bash").invoke({"command": command}, CTX)  # type: ignore[union-attr]
    return result.text, result.is_error


def test_the_environment_is_an_allow_list_without_credentials(tmp_path: Path) -> None:
    environ = {
        "PATH": "/usr/bin:/bin",
        "LANG": "C.UTF-8",
        "LC_ALL": "C",
        "OPENAI_API_KEY": "sk-abc",
        "DATABASE_URL": "postgres://u:p@h/db",
        "MODEL_ID": "claude",
        "RANDOM_THING": "x",
        "SPECWIRE_BASH_ENV": "RANDOM_THING,GITHUB_TOKEN",
        "GITHUB_TOKEN": "ghp_x",
    }
    env = scrubbed_environment(environ, home=tmp_path, tmpdir=tmp_path / "t")
    assert set(env) == {"PATH", "LANG", "LC_ALL", "RANDOM_THING", "HOME", "TMPDIR", "PWD", "SHELL"}
    assert env["HOME"] == str(tmp_path)


def test_a_granted_folder_never_contains_the_workspace(tmp_path: Path) -> None:
    policy = SandboxPolicy(tmp_path.resolve())
    (tmp_path / "t").mkdir()
    argv = policy.launcher_argv("true", tmp_path / "t", {"PATH": f"/usr/bin:{tmp_path.parent}:/"})
    config = marshal.loads(bytes.fromhex(argv[-1]))
    for granted in config["read_exec"]:
        assert not str(tmp_path.resolve()).startswith(granted.rstrip("/") + "/")
    assert config["masks"] == [str(tmp_path.resolve() / ".specwire")]


def test_the_state_folder_is_masked_and_the_workspace_is_not(tmp_path: Path) -> None:
    work = tmp_path / "work"
    (work / ".specwire" / "sessions").mkdir(parents=True)
    (work / ".specwire" / "sessions" / "log.jsonl").write_text("real\n", encoding="utf-8")
    (work / "a.txt").write_text("a\n", encoding="utf-8")
    text, error = run(work, "cat a.txt; ls -A .specwire | wc -l; echo b > b.txt")
    assert not error and text.startswith("a\n0\n")
    assert (work / "b.txt").read_text(encoding="utf-8") == "b\n"
    text, error = run(work, "echo forged >> .specwire/sessions/log.jsonl")
    assert error
    assert (work / ".specwire" / "sessions" / "log.jsonl").read_text(encoding="utf-8") == "real\n"


def test_a_private_temp_folder_is_writable_and_removed_after_the_call(tmp_path: Path) -> None:
    text, error = run(tmp_path, 'echo hi > "$TMPDIR/x" && cat "$TMPDIR/x" && echo "$TMPDIR"')
    assert not error, text
    lines = text.splitlines()
    assert lines[0] == "hi" and not Path(lines[1]).exists()


def test_the_shell_cannot_signal_its_host(tmp_path: Path) -> None:
    import os

    # The host's pid means nothing in the shell's PID namespace, and Landlock scopes signals.
    text, _ = run(tmp_path, f"kill -0 {os.getpid()} && echo reachable || echo refused")
    assert "refused" in text


def test_the_launcher_never_runs_a_command_unconfined_when_setup_fails(tmp_path: Path) -> None:
    config: dict[str, object] = {
        "root": "/nonexistent/root",
        "workspace": "/nonexistent/x",
        "read_exec": [],
        "read_write": [],
        "devices": [],
        "links": [],
        "masks": ["/nonexistent/x/.specwire"],
        "protect": [],
        "hide": [],
        "limits": {},
        "argv": ["/bin/sh", "-c", "echo ran"],
        "env": {},
    }
    done = subprocess.run(
        launcher_command(sys.executable, config),
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == sandbox.SETUP_FAILED
    assert "ran" not in done.stdout and done.stderr.startswith("specwire-sandbox: ")


def test_without_a_sandbox_bash_is_refused_at_start_unless_opted_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sandbox._cached_probe.cache_clear()
    monkeypatch.setattr(sandbox, "_probe", lambda workspace, settings: "Landlock is not available")
    monkeypatch.delenv(sandbox.UNSANDBOXED_ENV, raising=False)
    try:
        with pytest.raises(SandboxUnavailableError) as refused:
            builtin_catalog(["read", "bash"], tmp_path)
        assert "Landlock is not available" in str(refused.value)
        assert "SPECWIRE_UNSANDBOXED_BASH=1" in str(refused.value)
        builtin_catalog(["read", "ls"], tmp_path)  # no bash, no sandbox needed
        monkeypatch.setenv(sandbox.UNSANDBOXED_ENV, "1")
        catalog = builtin_catalog(["bash"], tmp_path)
        assert catalog.get("bash") is not None
    finally:
        sandbox._cached_probe.cache_clear()


def test_nothing_the_command_started_outlives_the_call(tmp_path: Path) -> None:
    """A process that left the group (setsid) still dies with the call: the shell is the first
    process of its own PID namespace."""
    import time

    text, error = run(
        tmp_path,
        'setsid sh -c "sleep 1; echo late > late.txt" </dev/null >/dev/null 2>&1 & echo started',
    )
    assert not error and text.startswith("started")
    time.sleep(2.5)
    assert not (tmp_path / "late.txt").exists()


def test_per_turn_catalogs_probe_the_sandbox_once_per_workspace(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    probed: list[Path] = []

    def probe(workspace: Path, settings: object) -> None:
        probed.append(workspace)

    sandbox._cached_probe.cache_clear()
    monkeypatch.setattr(sandbox, "_probe", probe)
    monkeypatch.delenv(sandbox.UNSANDBOXED_ENV, raising=False)
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    try:
        for _ in range(3):  # a channel host builds the catalog on every turn
            builtin_catalog(["read", "bash"], tmp_path / "a")
        builtin_catalog(["bash"], tmp_path / "b")
        assert probed == [(tmp_path / "a").resolve(), (tmp_path / "b").resolve()]
    finally:
        sandbox._cached_probe.cache_clear()
