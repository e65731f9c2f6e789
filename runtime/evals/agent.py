"""Running a built bundle's ``agent.py`` for one scripted session, in an isolated folder.

The compiler hands the runtime the bundle's source (``BuiltAgent``; the runtime never imports the
compiler). A session is one run of the bundle's ``main`` with ``--message`` per user message, as
``python agent.py --message … --message …`` would run it, executed in this process (as
``codegen run`` does) with the working directory, ``HOME``, ``sys.argv`` and the standard streams
switched for the run: its stores and session logs land under ``<cwd>/.specwire/``, its skills and
commands are looked up under ``<cwd>/home/``, and nothing it prints reaches the terminal.
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from specwire.runtime.core.paths import StoreLayout

AGENT_FILE = "agent.py"


class BuildFailed(Exception):
    """The spec did not compile: its problems, one located line each."""

    def __init__(self, lines: Sequence[str]) -> None:
        super().__init__("\n".join(lines))
        self.lines = tuple(lines)


@dataclass(frozen=True)
class BuiltAgent:
    spec_name: str
    target: str
    source: str  # the bundle's agent.py


@dataclass(frozen=True)
class SessionRun:
    status: int
    log: Path | None  # the session log the run wrote (None when it wrote none)
    stdout: str
    stderr: str


def session_messages_argv(messages: Sequence[str]) -> list[str]:
    """``--message=<text>`` per message (the ``=`` form: a message may start with a dash)."""
    return [f"--message={message}" for message in messages]


def run_session(agent: BuiltAgent, cwd: Path, messages: Sequence[str]) -> SessionRun:
    """Run one session of ``agent`` in ``cwd``; returns its exit status and the log it wrote."""
    cwd.mkdir(parents=True, exist_ok=True)
    sessions_dir = StoreLayout.for_cwd(cwd.resolve(), agent.spec_name).sessions_dir
    before = set(sessions_dir.glob("*.jsonl")) if sessions_dir.is_dir() else set()
    filename = f"<codegen eval {agent.spec_name}>/{AGENT_FILE}"
    code = compile(agent.source, filename, "exec")
    namespace: dict[str, Any] = {"__name__": "__main__", "__file__": filename}
    out, err = io.StringIO(), io.StringIO()
    status = 0
    with _isolated(cwd, [filename, *session_messages_argv(messages)], out, err):
        try:
            exec(code, namespace)
        except SystemExit as done:
            status = _status(done.code)
    after = set(sessions_dir.glob("*.jsonl")) if sessions_dir.is_dir() else set()
    new = sorted(after - before)
    return SessionRun(status, new[-1] if new else None, out.getvalue(), err.getvalue())


@contextlib.contextmanager
def _isolated(cwd: Path, argv: list[str], out: io.StringIO, err: io.StringIO) -> Iterator[None]:
    saved_argv, saved_cwd, saved_home = sys.argv, os.getcwd(), os.environ.get("HOME")
    home = cwd / "home"
    home.mkdir(exist_ok=True)
    sys.argv = argv
    os.environ["HOME"] = str(home)
    os.chdir(cwd)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            yield
    finally:
        os.chdir(saved_cwd)
        sys.argv = saved_argv
        if saved_home is None:
            os.environ.pop("HOME", None)
        else:
            os.environ["HOME"] = saved_home


def _status(code: object) -> int:
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    return 1
