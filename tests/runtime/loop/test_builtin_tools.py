"""The builtin tools, run against real files and real subprocesses in a tmp working directory."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import pytest

from specwire.runtime.core.tool_types import ToolContext, ToolResult
from specwire.runtime.tools.builtin import (
    BUILTIN_TOOL_NAMES,
    GREP_MAX_MATCHES,
    READ_MAX_BYTES,
    builtin_catalog,
)
from specwire.runtime.tools.shell import BASH_MAX_OUTPUT_BYTES

CTX = ToolContext("sess_0000000000000001", "tu_0000000000000001")


@pytest.fixture
def work(tmp_path: Path) -> Path:
    root = tmp_path / "work"
    (root / "docs").mkdir(parents=True)
    (root / "docs" / "notes.md").write_text("alpha\nbeta gamma\n", encoding="utf-8")
    (root / "readme.txt").write_text("gamma ray\n", encoding="utf-8")
    (tmp_path / "secret.txt").write_text("outside\n", encoding="utf-8")
    return root


def call(cwd: Path, name: str, **tool_input: Any) -> ToolResult:
    tool = builtin_catalog([name], cwd).get(name)
    assert tool is not None
    return tool.invoke(tool_input, CTX)


def test_the_catalog_keeps_the_given_order_and_rejects_unknown_names(work: Path) -> None:
    assert builtin_catalog(["write", "read", "bash"], work).names() == ["write", "read", "bash"]
    with pytest.raises(ValueError) as caught:
        builtin_catalog(["read", "fetch"], work)
    assert "'fetch'" in str(caught.value)
    assert "known: " + ", ".join(BUILTIN_TOOL_NAMES) in str(caught.value)


def test_flags_say_what_each_tool_may_do(work: Path) -> None:
    tools = {tool.name: tool for tool in builtin_catalog(list(BUILTIN_TOOL_NAMES), work)}
    assert tools["read"].read_only and tools["ls"].read_only and tools["grep"].read_only
    assert tools["write"].destructive and tools["bash"].destructive
    assert tools["bash"].scope == "external" and tools["read"].scope == "internal"


def test_read_returns_a_file_and_refuses_paths_outside_cwd(work: Path) -> None:
    assert call(work, "read", path="docs/notes.md") == ToolResult("alpha\nbeta gamma\n")
    for escape in ["../secret.txt", str(work.parent / "secret.txt"), "docs/../../secret.txt"]:
        refused = call(work, "read", path=escape)
        assert refused.is_error and "outside the working directory" in refused.text


def test_read_refuses_a_symlink_that_points_outside(work: Path) -> None:
    os.symlink(work.parent / "secret.txt", work / "link.txt")
    refused = call(work, "read", path="link.txt")
    assert refused.is_error and "outside the working directory" in refused.text


def test_read_caps_large_files_and_refuses_binary(work: Path) -> None:
    (work / "big.txt").write_text("é" * READ_MAX_BYTES, encoding="utf-8")
    result = call(work, "read", path="big.txt")
    assert not result.is_error
    assert result.text.endswith(
        f"[truncated: showing the first {READ_MAX_BYTES} of {2 * READ_MAX_BYTES} bytes]"
    )
    (work / "blob.bin").write_bytes(b"\x00\x01\x02")
    assert call(work, "read", path="blob.bin").is_error
    assert call(work, "read", path="docs").is_error


def test_write_is_atomic_creates_parents_and_stays_inside(work: Path) -> None:
    result = call(work, "write", path="out/new.txt", content="hello\n")
    assert result == ToolResult("wrote 6 bytes to out/new.txt")
    assert (work / "out" / "new.txt").read_text(encoding="utf-8") == "hello\n"
    call(work, "write", path="out/new.txt", content="replaced")
    assert (work / "out" / "new.txt").read_text(encoding="utf-8") == "replaced"
    assert sorted(p.name for p in (work / "out").iterdir()) == ["new.txt"]  # no temp files left
    assert call(work, "write", path="../evil.txt", content="x").is_error
    assert not (work.parent / "evil.txt").exists()


def test_write_refuses_the_agents_own_memory(work: Path) -> None:
    refused = call(work, "write", path=".specwire/sessions/sess_x.jsonl", content="{}")
    assert refused.is_error and "refusing to write under .specwire/" in refused.text
    assert not (work / ".specwire").exists()


def test_ls_lists_sorted_with_directories_marked(work: Path) -> None:
    assert call(work, "ls").text == "docs/\nreadme.txt"
    assert call(work, "ls", path="docs").text == "notes.md"
    assert call(work, "ls", path="..").is_error
    assert call(work, "ls", path="readme.txt").is_error


def test_grep_finds_lines_under_cwd(work: Path) -> None:
    assert (
        call(work, "grep", pattern="gam+a").text
        == "docs/notes.md:2: beta gamma\nreadme.txt:1: gamma ray"
    )
    assert call(work, "grep", pattern="gamma", path="docs").text == "docs/notes.md:2: beta gamma"
    assert call(work, "grep", pattern="zzz").text == "no matches for /zzz/ in ."
    bad = call(work, "grep", pattern="(")
    assert bad.is_error and "invalid pattern" in bad.text
    assert call(work, "grep", pattern="x", path="..").is_error


def test_grep_caps_its_output(work: Path) -> None:
    (work / "many.txt").write_text("hit\n" * (GREP_MAX_MATCHES + 50), encoding="utf-8")
    lines = call(work, "grep", pattern="hit", path="many.txt").text.splitlines()
    assert len(lines) == GREP_MAX_MATCHES + 1
    assert lines[-1].startswith(f"[output capped at {GREP_MAX_MATCHES} matches")


def test_bash_runs_in_cwd_and_reports_the_exit_code(work: Path) -> None:
    ok = call(work, "bash", command="pwd; ls docs")
    assert ok == ToolResult(f"{work.resolve()}\nnotes.md\n[exit code 0]")
    failed = call(work, "bash", command="echo oops >&2; exit 3")
    assert failed == ToolResult("oops\n[exit code 3]", True)


def test_bash_kills_a_command_that_overruns_its_timeout(work: Path) -> None:
    result = call(
        work,
        "bash",
        command="echo started; (sleep 1; echo late > late.txt) & wait",
        timeoutMs=300,
    )
    assert result == ToolResult("started\n[timed out after 300 ms; the command was killed]", True)
    # The background child was killed with the call: it does not outlive it. (Its pid is not
    # a host pid — the shell runs in a PID namespace of its own — so the test watches its work.)
    time.sleep(2)
    assert not (work / "late.txt").exists()


def test_bash_caps_its_output(work: Path) -> None:
    result = call(
        work, "bash", command=f"head -c {BASH_MAX_OUTPUT_BYTES * 3} /dev/zero | tr '\\0' a"
    )
    assert (
        f"[output truncated: showing {BASH_MAX_OUTPUT_BYTES} of {BASH_MAX_OUTPUT_BYTES * 3} bytes]"
        in result.text
    )
    assert len(result.text) < BASH_MAX_OUTPUT_BYTES + 200


def test_bash_rejects_a_timeout_out_of_range(work: Path) -> None:
    result = call(work, "bash", command="true", timeoutMs=0)
    assert result.is_error and "timeoutMs" in result.text


def test_no_file_tool_reads_the_state_folder(work: Path) -> None:
    """Other conversations' session logs, the facts and the evidence key live there."""
    sessions = work / ".specwire" / "sessions"
    sessions.mkdir(parents=True)
    (sessions / "sess_00000000000000aa.jsonl").write_text("other thread\n", encoding="utf-8")
    (work / "state").symlink_to(".specwire")
    for name, tool_input in [
        ("read", {"path": ".specwire/sessions/sess_00000000000000aa.jsonl"}),
        ("read", {"path": "state/sessions/sess_00000000000000aa.jsonl"}),
        ("read", {"path": "docs/../.specwire/sessions/sess_00000000000000aa.jsonl"}),
        ("ls", {"path": ".specwire/sessions"}),
        ("ls", {"path": "state"}),
        ("grep", {"pattern": "other", "path": ".specwire"}),
        ("grep", {"pattern": "other", "path": "state/sessions"}),
    ]:
        result = call(work, name, **tool_input)
        assert result.is_error, (name, tool_input, result.text)
        assert "other thread" not in result.text
        assert ".specwire/ holds the agent's memory" in result.text
    listing = call(work, "ls")
    assert ".specwire/" in listing.text.split("\n")  # visible, not readable
