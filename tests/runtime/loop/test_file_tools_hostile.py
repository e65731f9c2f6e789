"""The file tools against a hostile agent: swapped symlinks, FIFOs, catastrophic patterns.

Cases that would hang if the protection broke run in a subprocess with a generous timeout, so
a regression fails instead of hanging the suite. Nothing here asserts how long anything took.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from specwire.runtime.core.tool_types import ToolContext, ToolResult
from specwire.runtime.tools.builtin import builtin_catalog

CTX = ToolContext("sess_0000000000000001", "tu_0000000000000001")
HANG_GUARD_S = 60
WRITES = 2000


def call(cwd: Path, name: str, **tool_input: Any) -> ToolResult:
    tool = builtin_catalog([name], cwd).get(name)
    assert tool is not None
    return tool.invoke(tool_input, CTX)


@pytest.fixture
def work(tmp_path: Path) -> Path:
    root = tmp_path / "work"
    (root / "docs").mkdir(parents=True)
    (root / "docs" / "notes.md").write_text("alpha\nbeta gamma\n", encoding="utf-8")
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret.txt").write_text("outside\n", encoding="utf-8")
    return root.resolve()


# -- the symlink swap race ---------------------------------------------------------------------

SWAPPER = """
import ctypes, os, sys, select
work, outside = sys.argv[1], sys.argv[2]
sub, other = os.path.join(work, "sub"), os.path.join(work, "sub.swap")
try:
    renameat2 = ctypes.CDLL(None, use_errno=True).renameat2
except (OSError, AttributeError):
    renameat2 = None


def exchange():
    # Atomic on Linux (renameat2 RENAME_EXCHANGE); elsewhere park the directory, put a link in
    # its place and back, ignoring the moments the writer created "sub" itself.
    if renameat2 is not None and renameat2(-100, sub.encode(), -100, other.encode(), 2) == 0:
        return
    try:
        os.rename(sub, os.path.join(work, "parked"))
        os.symlink(outside, sub)
        os.unlink(sub)
        os.rename(os.path.join(work, "parked"), sub)
    except OSError:
        pass


print("swapping", flush=True)
swaps = 0
while not select.select([sys.stdin], [], [], 0)[0]:
    exchange()
    swaps += 1
print(swaps, flush=True)
"""


def test_a_swapped_symlink_never_redirects_a_write_outside(work: Path) -> None:
    outside = work.parent / "outside"
    (work / "sub").mkdir()
    (work / "sub.swap").symlink_to(outside, target_is_directory=True)
    tool = builtin_catalog(["write"], work).get("write")
    assert tool is not None
    # The attacker is another process (the agent's shell), swapping as fast as it can.
    swapper = subprocess.Popen(
        [sys.executable, "-c", SWAPPER, str(work), str(outside)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert swapper.stdin is not None and swapper.stdout is not None
    assert swapper.stdout.readline().strip() == "swapping"
    results: list[ToolResult] = []
    try:
        for n in range(WRITES):
            results.append(tool.invoke({"path": f"sub/f{n}.txt", "content": "x"}, CTX))
    finally:
        swapper.stdin.close()
        swaps = int(swapper.stdout.readline() or 0)
        swapper.wait(timeout=HANG_GUARD_S)
    assert swaps > 0
    assert sorted(p.name for p in outside.iterdir()) == ["secret.txt"]  # nothing landed there
    written = [r for r in results if not r.is_error]
    refused = [r for r in results if r.is_error]
    assert written, "no write went through at all"
    for result in refused:
        assert "outside the working directory" in result.text, result.text
    landed = {p.name for p in work.rglob("f*.txt")}
    assert len(landed) == len(written)


# -- symlinks that stay inside are followed, safely ---------------------------------------------


def test_symlinks_inside_the_workspace_are_followed(work: Path) -> None:
    (work / "notes-link.md").symlink_to("docs/notes.md")
    (work / "docs-link").symlink_to(work / "docs", target_is_directory=True)  # absolute, inside
    assert call(work, "read", path="notes-link.md").text == "alpha\nbeta gamma\n"
    assert call(work, "read", path="docs-link/notes.md").text == "alpha\nbeta gamma\n"
    assert call(work, "read", path=str(work / "docs" / "notes.md")).text.startswith("alpha")
    written = call(work, "write", path="docs-link/new.md", content="hi")
    assert written == ToolResult("wrote 2 bytes to docs/new.md")
    assert (work / "docs" / "new.md").read_text(encoding="utf-8") == "hi"
    assert call(work, "ls").text == "docs-link@\ndocs/\nnotes-link.md@"
    assert call(work, "ls", path="docs-link").text == "new.md\nnotes.md"


def test_a_symlink_leading_out_is_refused_however_it_gets_there(work: Path) -> None:
    outside = work.parent / "outside"
    (work / "up").symlink_to("..", target_is_directory=True)
    (work / "abs").symlink_to(outside, target_is_directory=True)
    (work / "hop").symlink_to("docs/../up")  # a chain: inside, then out
    (work / "docs" / "back").symlink_to("../../outside/secret.txt")
    for path in ["up/outside/secret.txt", "abs/secret.txt", "hop/outside/secret.txt"]:
        for tool, extra in [("read", {}), ("write", {"content": "x"}), ("ls", {})]:
            result = call(work, tool, path=path, **extra)
            assert result.is_error and "outside the working directory" in result.text, result
    refused = call(work, "read", path="docs/back")
    assert refused.is_error and "outside the working directory" in refused.text
    assert sorted(p.name for p in outside.iterdir()) == ["secret.txt"]
    assert (outside / "secret.txt").read_text(encoding="utf-8") == "outside\n"


def test_a_symlink_loop_is_refused(work: Path) -> None:
    (work / "a").symlink_to("b")
    (work / "b").symlink_to("a")
    result = call(work, "read", path="a")
    assert result.is_error and "too many levels of symbolic links" in result.text


def test_write_refuses_the_state_folder_even_through_a_link(work: Path) -> None:
    (work / ".specwire").mkdir()
    (work / "memory").symlink_to(".specwire", target_is_directory=True)
    refused = call(work, "write", path="memory/sessions/sess_x.jsonl", content="{}")
    assert refused.is_error and "refusing to write under .specwire/" in refused.text
    assert list((work / ".specwire").iterdir()) == []


def test_write_through_a_file_used_as_a_directory_is_refused(work: Path) -> None:
    result = call(work, "write", path="docs/notes.md/inner.txt", content="x")
    assert result.is_error and "'notes.md' is not a directory" in result.text


def test_grep_does_not_follow_links_while_walking_but_does_when_named(work: Path) -> None:
    (work / "docs-link").symlink_to("docs", target_is_directory=True)
    (work / "escape").symlink_to(work.parent / "outside", target_is_directory=True)
    assert call(work, "grep", pattern="gamma").text == "docs/notes.md:2: beta gamma"
    assert call(work, "grep", pattern="gamma", path="docs-link").text == (
        "docs/notes.md:2: beta gamma"
    )
    assert call(work, "grep", pattern="outside", path="escape").is_error


# -- FIFOs and catastrophic patterns (hang-guarded) ---------------------------------------------

RUNNER = """
import json, sys
from pathlib import Path
import specwire.runtime.tools.builtin as tools
from specwire.runtime.core.tool_types import ToolContext

cwd, name, raw = Path(sys.argv[1]), sys.argv[2], json.loads(sys.argv[3])
tools.GREP_TIME_LIMIT_S = float(sys.argv[4])
tool = tools.builtin_catalog([name], cwd).get(name)
result = tool.invoke(raw, ToolContext("sess_0000000000000001", "tu_0000000000000001"))
print(json.dumps({"text": result.text, "isError": result.is_error}))
"""


def guarded_call(cwd: Path, name: str, limit_s: float = 3.0, **tool_input: Any) -> ToolResult:
    done = subprocess.run(
        [sys.executable, "-c", RUNNER, str(cwd), name, json.dumps(tool_input), str(limit_s)],
        capture_output=True,
        text=True,
        timeout=HANG_GUARD_S,
        check=True,
    )
    out = json.loads(done.stdout)
    return ToolResult(out["text"], out["isError"])


def test_read_and_grep_refuse_a_fifo_without_hanging(work: Path) -> None:
    os.mkfifo(work / "pipe.txt")
    read = guarded_call(work, "read", path="pipe.txt")
    assert read == ToolResult(
        "read: 'pipe.txt' is a FIFO (named pipe), not a regular file; refusing to open it", True
    )
    grep_named = guarded_call(work, "grep", pattern="x", path="pipe.txt")
    assert grep_named.is_error and "is a FIFO (named pipe)" in grep_named.text
    # Walking a directory, a FIFO is passed over like any file that is not a regular file.
    assert guarded_call(work, "grep", pattern="gamma").text == "docs/notes.md:2: beta gamma"
    assert guarded_call(work, "ls").text == "docs/\npipe.txt"


def test_write_replaces_a_fifo_without_hanging(work: Path) -> None:
    os.mkfifo(work / "pipe.txt")
    assert guarded_call(work, "write", path="pipe.txt", content="now a file").text == (
        "wrote 10 bytes to pipe.txt"
    )
    assert (work / "pipe.txt").read_text(encoding="utf-8") == "now a file"


def test_a_catastrophic_pattern_stops_at_the_limit_with_the_matches_so_far(work: Path) -> None:
    (work / "a.txt").write_text("aaaa\nno\naa\n", encoding="utf-8")
    (work / "b.txt").write_text("a" * 48 + "b\n", encoding="utf-8")  # 2^48 ways to fail
    (work / "c.txt").write_text("aaa\n", encoding="utf-8")  # never reached
    result = guarded_call(work, "grep", limit_s=1.0, pattern="^(a+)+$")
    lines = result.text.splitlines()
    assert result.is_error
    assert lines[:2] == ["a.txt:1: aaaa", "a.txt:3: aa"]
    assert lines[2] == (
        "grep: stopped after the 1s time limit: the pattern is too slow on this input (nested "
        "repetition such as (a+)+ can take exponential time); the 2 match(es) above were found "
        "before it — simplify the pattern or narrow the path"
    )


def test_grep_still_answers_a_plain_pattern_in_full(work: Path) -> None:
    (work / "b.txt").write_text(
        textwrap.dedent("""\
        one gamma
        two
        three gamma
        """),
        encoding="utf-8",
    )
    assert call(work, "grep", pattern="gam+a").text == (
        "b.txt:1: one gamma\nb.txt:3: three gamma\ndocs/notes.md:2: beta gamma"
    )


@pytest.mark.parametrize("name", ["read", "write", "ls", "grep"])
def test_a_nul_in_a_path_is_a_clear_refusal(work: Path, name: str) -> None:
    extra = {"content": "x"} if name == "write" else {"pattern": "x"} if name == "grep" else {}
    result = call(work, name, path="notes\x00.txt", **extra)
    assert result.is_error
    assert "NUL character" in result.text and "internal error" not in result.text
