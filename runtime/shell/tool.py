"""The ``bash`` builtin tool: one shell command in the working directory, time- and output-capped.

The process group is killed when the call ends, so nothing the command started outlives it.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import threading
from pathlib import Path
from typing import IO

from pydantic import BaseModel, ConfigDict, Field

from runtime.tools import ToolResult

BASH_DEFAULT_TIMEOUT_MS = 30_000
BASH_MAX_TIMEOUT_MS = 600_000
BASH_MAX_OUTPUT_BYTES = 32 * 1024


class BashInput(BaseModel):
    model_config = ConfigDict(extra="forbid")
    command: str = Field(min_length=1, description="A shell command, run in the working directory.")
    timeoutMs: int | None = Field(  # camelCase: the tool schema spelling
        default=None,
        ge=1,
        le=BASH_MAX_TIMEOUT_MS,
        description=f"Kill the command after this many ms (default {BASH_DEFAULT_TIMEOUT_MS}).",
    )


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


def _shell() -> str:
    return shutil.which("bash") or "/bin/sh"


def run_bash(cwd: Path, parsed: BashInput) -> ToolResult:
    timeout_ms = parsed.timeoutMs or BASH_DEFAULT_TIMEOUT_MS
    process = subprocess.Popen(
        [_shell(), "-c", parsed.command],
        cwd=cwd,
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
    return ToolResult(f"{body}\n[exit code {code}]", code != 0)
