"""Bytes are not text: undecodable input at every entry point is handled without a traceback.

Messages (``--message`` argv and stdin lines with byte 0xFF), file names that are not UTF-8
(``ls``, ``grep``, ``read``), lone surrogates in a tool's input or result, and session-log
events: each becomes U+FFFD where it is shown or kept, and the log's seal still verifies.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from specwire.runtime.core.tool_types import ToolContext
from specwire.runtime.core.undecodable import valid_data, valid_text
from specwire.runtime.sessions.log import SessionLog, read_events
from specwire.runtime.tools.builtin import builtin_catalog

BAD_NAME = os.fsdecode(b"bad\xffname.txt")
SHOWN_NAME = "bad\ufffdname.txt"
AGENT = """
import sys
from pathlib import Path
from specwire.runtime.tools.builtin import builtin_catalog
from specwire.runtime.hosts.cli import run_cli
from specwire.runtime.hosts.types import TurnSetup
sys.exit(run_cli(spec_name="demo", model="scripted", instructions="You help.",
    build_session=lambda: TurnSetup(catalog=builtin_catalog(["read", "ls", "grep"], Path.cwd()))))
"""


def _run(
    tmp_path: Path, args: list[bytes], stdin: bytes = b""
) -> subprocess.CompletedProcess[bytes]:
    script = tmp_path / "agent.py"
    script.write_text(AGENT, encoding="utf-8")
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    environ = {k: v for k, v in os.environ.items() if not k.startswith("SPECWIRE_")}
    environ["PYTHONIOENCODING"] = "utf-8:strict"  # the strictest console a user may have
    return subprocess.run(
        [os.fsencode(sys.executable), os.fsencode(script), *args],
        cwd=work,
        input=stdin,
        capture_output=True,
        env=environ,
        timeout=60,
        check=False,
    )


def _logged_texts(work: Path) -> list[str]:
    texts: list[str] = []
    for log in sorted((work / ".specwire" / "sessions").glob("sess_*.jsonl")):
        events = list(read_events(log))  # verified: a line whose seal fails is not returned
        raw_lines = log.read_bytes().splitlines()
        assert len(events) == len(raw_lines)
        texts += [json.dumps(event.payload, ensure_ascii=False) for event in events]
    return texts


def test_valid_text_replaces_lone_surrogates_and_keeps_clean_text_as_is() -> None:
    clean = "plain text, ünïcode and emoji 👍"
    assert valid_text(clean) is clean
    assert valid_text("a\udcffb\ud800") == "a\ufffdb\ufffd"
    assert valid_data({"k\udc80": ["x\udcff", 1, None]}) == {"k\ufffd": ["x\ufffd", 1, None]}


def test_session_log_seals_an_event_holding_lone_surrogates(tmp_path: Path) -> None:
    log = SessionLog(tmp_path, "sess_0123456789abcdef")
    log.append("user_message", {"text": "hello \udcff", "turn": 1, "\ud800": ["\udfff"]})
    [event] = list(read_events(log.path))
    assert event.payload == {"text": "hello \ufffd", "turn": 1, "\ufffd": ["\ufffd"]}
    log.path.read_bytes().decode("utf-8")  # the file is valid UTF-8


def test_a_message_argument_with_byte_0xff_is_a_turn_not_a_traceback(tmp_path: Path) -> None:
    done = _run(tmp_path, [b"--message", b"hello \xff there"])
    assert done.returncode == 0, done.stderr
    assert b"Traceback" not in done.stderr
    assert "Noted: hello \ufffd there." in done.stdout.decode("utf-8")
    assert any("hello \ufffd there" in text for text in _logged_texts(tmp_path / "work"))


def test_a_stdin_line_with_byte_0xff_is_a_turn_not_a_traceback(tmp_path: Path) -> None:
    done = _run(tmp_path, [], stdin=b"caf\xe9 \xff\nsecond line\n")
    assert done.returncode == 0, done.stderr
    assert b"Traceback" not in done.stderr
    out = done.stdout.decode("utf-8")
    assert "Noted: caf\ufffd \ufffd." in out and "Noted: second line." in out


def test_a_non_utf8_file_name_in_the_workspace_is_listed_by_the_agent(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (work / BAD_NAME).write_text("needle here\n", encoding="utf-8")
    done = _run(tmp_path, [b"--message", b'call ls {"path": "."}'])
    assert done.returncode == 0, done.stderr
    assert b"Traceback" not in done.stderr
    assert any(SHOWN_NAME in text for text in _logged_texts(work))


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    (tmp_path / BAD_NAME).write_text("needle here\n", encoding="utf-8")
    sub = tmp_path / os.fsdecode(b"dir\xfe")
    sub.mkdir()
    (sub / "inner.txt").write_text("needle inside\n", encoding="utf-8")
    (tmp_path / "latin1.txt").write_bytes(b"caf\xe9 needle\n")
    return tmp_path


def _call(workspace: Path, name: str, **given: str) -> str:
    tool = builtin_catalog(["ls", "grep", "read"], workspace).get(name)
    assert tool is not None
    result = tool.invoke(given, ToolContext("sess_0123456789abcdef", "tu_0123456789abcdef"))
    result.text.encode("utf-8")  # valid Unicode: nothing downstream can fail on it
    return result.text


def test_ls_grep_and_read_handle_non_utf8_names(workspace: Path) -> None:
    listing = _call(workspace, "ls").splitlines()
    assert SHOWN_NAME in listing and "dir\ufffd/" in listing
    found = _call(workspace, "grep", pattern="needle")
    assert f"{SHOWN_NAME}:1: needle here" in found
    assert "dir\ufffd/inner.txt:1: needle inside" in found
    # A tool's input must be valid Unicode: a lone surrogate is a clear error, not a crash.
    assert "read: invalid input: path" in _call(workspace, "read", path=BAD_NAME)
    assert "not a UTF-8 text file" in _call(workspace, "read", path="latin1.txt")
    assert "not a file" in _call(workspace, "read", path=SHOWN_NAME)
