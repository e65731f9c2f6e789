"""run_cli as a user runs it: a real subprocess reading piped stdin, writing a session log."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

from hosts_support import of_kind, read_log, run_agent, session_logs, write_agent

AGENT = """
from specwire.runtime.tools.builtin import builtin_catalog
from specwire.runtime.hosts.cli import run_cli
from specwire.runtime.hosts.types import TurnSetup
from specwire.runtime.core.seams import LoopOptions, MemorySeam, SlashCommand

MODEL = "model=scripted"
if len(sys.argv) > 1 and sys.argv[1].startswith("model="):
    MODEL = sys.argv.pop(1)
options = LoopOptions(
    memory=MemorySeam(auto_recall=True, recall=lambda query, k: ["the customer pays in EUR"]),
    slash_commands={
        "peek": SlashCommand(
            "peek", "Read a file.", "<path>", 'call read {"path": "$ARGUMENTS"}', "project"
        )
    },
)
sys.exit(
    run_cli(
        spec_name="demo",
        model=MODEL.removeprefix("model="),
        instructions="You help with tickets.",
        build_session=lambda: TurnSetup(
            catalog=builtin_catalog(["read", "ls"], Path.cwd()), options=options
        ),
    )
)
"""


def setup(tmp_path: Path) -> tuple[Path, Path]:
    work = tmp_path / "work"
    work.mkdir()
    (work / "ticket.txt").write_text("Invoice export fails for EUR.\n", encoding="utf-8")
    return write_agent(tmp_path, AGENT), work


def the_session_log(work: Path, stderr: str) -> Path:
    match = re.search(r"^session log: (.+)$", stderr, re.MULTILINE)
    assert match, stderr
    path = Path(match.group(1))
    assert path.parent == (work / ".specwire" / "sessions").resolve()
    assert re.fullmatch(r"sess_[0-9a-f]{16}\.jsonl", path.name)
    return path


def test_piped_stdin_runs_a_session_and_logs_it(tmp_path: Path) -> None:
    agent, work = setup(tmp_path)
    stdin = 'hello\n\ncall read {"path": "ticket.txt"}\n/peek ticket.txt\n/help\n'
    done = run_agent(agent, work, stdin=stdin)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    assert done.stdout.splitlines() == [
        "Noted: hello. From memory: the customer pays in EUR.",
        "Done: Invoice export fails for EUR.",
        "Done: Invoice export fails for EUR.",
        "Commands:",
        "  /help — list the commands",
        "  /exit — end the session",
        "  /peek <path> — Read a file.",
    ]
    assert not done.stdout.startswith(">")  # no prompt when stdin is not a terminal
    banner = done.stderr.splitlines()[0]
    assert banner.startswith("demo · model scripted · 2 tool(s) · memory (auto-recall on")
    assert "[memory] recalled 1 memory(ies) into the prompt" in done.stderr
    events = read_log(the_session_log(work, done.stderr))
    assert events[0]["type"] == "session_start"
    assert events[0]["payload"] == {"spec": "demo", "target": "cli", "model": "scripted"}
    assert [r["name"] for r in of_kind(events, "tool_result")] == ["read", "read"]
    assert of_kind(events, "user_message")[3] == {
        "text": 'call read {"path": "ticket.txt"}',
        "turn": 3,
        "synthetic": True,
    }
    assert of_kind(events, "session_end") == [{"stopReason": "exit", "turns": 3}]


def test_exit_stops_reading(tmp_path: Path) -> None:
    agent, work = setup(tmp_path)
    done = run_agent(agent, work, stdin="one\n/exit\ntwo\n")
    assert done.returncode == 0
    assert done.stdout.splitlines() == ["Noted: one. From memory: the customer pays in EUR."]


def test_messages_from_argv_run_without_reading_stdin(tmp_path: Path) -> None:
    agent, work = setup(tmp_path)
    done = run_agent(
        agent, work, "--message", "first", "-m", "ls-less second", stdin="never read\n"
    )
    assert done.returncode == 0, done.stderr
    assert [line.split(".")[0] for line in done.stdout.splitlines()] == [
        "Noted: first",
        "Noted: ls-less second",
    ]
    [log] = session_logs(work / ".specwire" / "sessions").values()
    assert [m["text"] for m in of_kind(log, "user_message")] == ["first", "ls-less second"]


def test_an_unavailable_model_is_a_clear_error_without_traceback(tmp_path: Path) -> None:
    agent, work = setup(tmp_path)
    done = run_agent(agent, work, "model=mystery/gpt-4o", stdin="hello\n")
    assert done.returncode == 2
    assert done.stdout == ""
    assert "Traceback" not in done.stderr
    assert 'demo: model "mystery/gpt-4o" is not available' in done.stderr
    assert "SPECWIRE_MODEL=scripted" in done.stderr
    assert not (work / ".specwire").exists()


def test_specwire_model_overrides_the_spec_model_both_ways(tmp_path: Path) -> None:
    agent, work = setup(tmp_path)
    rescued = run_agent(agent, work, "model=mystery/gpt-4o", env={"SPECWIRE_MODEL": "scripted/x"})
    assert rescued.returncode == 0, rescued.stderr
    assert "model scripted/x" in rescued.stderr
    broken = run_agent(agent, work, env={"SPECWIRE_MODEL": "mystery-9"})
    assert broken.returncode == 2
    assert '"mystery-9" (from SPECWIRE_MODEL)' in broken.stderr


def test_a_bad_argument_is_a_usage_error(tmp_path: Path) -> None:
    agent, work = setup(tmp_path)
    done = run_agent(agent, work, "--bogus")
    assert done.returncode == 2 and "usage:" in done.stderr and "Traceback" not in done.stderr


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_ctrl_c_aborts_the_session_and_still_tears_it_down(tmp_path: Path) -> None:
    agent, work = setup(tmp_path)
    environ = {k: v for k, v in os.environ.items() if not k.startswith("SPECWIRE_")}
    process = subprocess.Popen(
        [sys.executable, str(agent)],
        cwd=work,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=environ,
        # A person's terminal delivers Ctrl-C; pytest run as a background job ignores SIGINT,
        # and the child would inherit that.
        preexec_fn=_default_sigint,
    )
    sessions = work / ".specwire" / "sessions"
    deadline = time.monotonic() + 30
    while not list(sessions.glob("sess_*.jsonl")) and time.monotonic() < deadline:
        time.sleep(0.05)
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=30)
    assert process.returncode == 130, err
    assert "interrupted" in err and "Traceback" not in err
    [log] = session_logs(sessions).values()
    assert of_kind(log, "session_end") == [{"stopReason": "abort", "turns": 0}]
