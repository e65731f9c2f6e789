"""The ``bash`` builtin tool: one shell command in the working directory, time- and output-capped.

The command runs sandboxed (see ``sandbox.py``): the working directory minus the state folder,
a private temp folder, the system folders read-only, a scrubbed environment. The process group
is killed when the call ends, so nothing the command started outlives it.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import tempfile
import threading
from pathlib import Path
from typing import IO, TYPE_CHECKING

from specwire.runtime.core.tool_types import ToolResult
from specwire.runtime.tools.shell.errors import EgressUnavailableError
from specwire.runtime.tools.shell.limits import (
    BASH_DEFAULT_TIMEOUT_MS,
    BASH_MAX_OUTPUT_BYTES,
)
from specwire.runtime.tools.shell.sandbox import (
    SETUP_FAILED,
    SandboxPolicy,
    require_sandbox,
    scrubbed_environment,
    shell_path,
)
from specwire.runtime.tools.shell.settings import BashSettings

if TYPE_CHECKING:
    from specwire.runtime.tools.shell.inputs import BashInput


class _Drain:
    """Reads a pipe to its end on a thread, keeping only the first ``cap`` bytes."""

    def __init__(self, stream: IO[bytes], cap: int) -> None:
        self.kept = bytearray()
        self.total = 0
        self._stream = stream
        self._cap = cap
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while chunk := self._stream.read(65536):
            self.total += len(chunk)
            room = self._cap - len(self.kept)
            if room > 0:
                self.kept.extend(chunk[:room])

    def join(self, timeout: float) -> None:
        self._thread.join(timeout)


def run_bash(cwd: Path, parsed: BashInput, settings: BashSettings | None = None) -> ToolResult:
    settings = settings or BashSettings()
    scratch = Path(tempfile.mkdtemp(prefix="specwire-sh-"))
    try:
        sandboxed = require_sandbox(cwd, settings)
        try:
            argv, env = _argv(cwd, parsed.command, scratch, settings, sandboxed=sandboxed)
        except EgressUnavailableError as exc:
            return ToolResult(f"specwire-sandbox: {exc}\n[the command did not run]", True)
        return _run(cwd, parsed, argv, env, sandboxed=sandboxed)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _argv(
    cwd: Path, command: str, scratch: Path, settings: BashSettings, *, sandboxed: bool
) -> tuple[list[str], dict[str, str]]:
    if sandboxed:
        return SandboxPolicy(cwd, settings).launcher_argv(command, scratch, os.environ), {}
    tmpdir = scratch / "tmp"
    tmpdir.mkdir(mode=0o700)
    env = scrubbed_environment(os.environ, home=cwd, tmpdir=tmpdir)
    return [shell_path(), "-c", command], env


def _run(
    cwd: Path, parsed: BashInput, argv: list[str], env: dict[str, str], *, sandboxed: bool
) -> ToolResult:
    timeout_ms = parsed.timeoutMs or BASH_DEFAULT_TIMEOUT_MS
    process = subprocess.Popen(
        argv,
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    assert process.stdout is not None
    drain = _Drain(process.stdout, BASH_MAX_OUTPUT_BYTES)
    timed_out = False
    try:
        process.wait(timeout=timeout_ms / 1000)
    except subprocess.TimeoutExpired:
        timed_out = True
    finally:
        # The whole process group goes: nothing the command started outlives the call.
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        drain.join(timeout=2)
        process.stdout.close()
    output = drain.kept.decode("utf-8", errors="replace").rstrip("\n")
    if drain.total > BASH_MAX_OUTPUT_BYTES:
        output += f"\n[output truncated: showing {BASH_MAX_OUTPUT_BYTES} of {drain.total} bytes]"
    body = output or "(no output)"
    if timed_out:
        return ToolResult(
            f"{body}\n[timed out after {timeout_ms} ms; the command was killed]", True
        )
    code = process.returncode
    if sandboxed and code == SETUP_FAILED and output.startswith("specwire-sandbox:"):
        return ToolResult(f"{output}\n[the command did not run]", True)
    return ToolResult(f"{body}\n[exit code {code}]", code != 0)
