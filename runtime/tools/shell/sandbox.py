"""What the ``bash`` tool's shell may touch, and whether this machine can enforce it.

The shell reads and writes only the working directory (minus the state folder, which is
masked) and a private temp folder; it reads and executes the system folders; it sees an
environment scrubbed to an allow-list. ``launch.py`` enforces this with a user + mount namespace
and Landlock. Where that cannot be set up the ``bash`` tool is refused at start-up. An operator
who accepts the risk sets ``SPECWIRE_UNSANDBOXED_BASH=1``: the shell then runs unconfined (the
scrubbed environment still applies, and session-log seals still keep forged lines out of the
evidence).
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from specwire.runtime.core.paths import SPECWIRE_DIRNAME
from specwire.runtime.safety.redaction import looks_secret

UNSANDBOXED_ENV = "SPECWIRE_UNSANDBOXED_BASH"
EXTRA_ENV_ENV = "SPECWIRE_BASH_ENV"
LAUNCHER = Path(__file__).with_name("launch.py")
SETUP_FAILED = 125

SYSTEM_READ_EXEC = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc")
DEVICES = ("/dev/null", "/dev/zero", "/dev/random", "/dev/urandom", "/dev/full")
ENV_ALLOWED = frozenset({"PATH", "LANG", "LANGUAGE", "TERM", "TZ", "USER", "LOGNAME"})


class SandboxUnavailableError(RuntimeError):
    """The ``bash`` tool is listed but no sandbox can be set up on this machine."""


def scrubbed_environment(environ: Mapping[str, str], *, home: Path, tmpdir: Path) -> dict[str, str]:
    """The allow-listed variables, never one whose name looks like a credential."""
    extra = {n.strip() for n in environ.get(EXTRA_ENV_ENV, "").split(",") if n.strip()}
    allowed = ENV_ALLOWED | extra
    env = {
        name: value
        for name, value in environ.items()
        if (name in allowed or name.startswith("LC_")) and not looks_secret(name)
    }
    env.setdefault("PATH", "/usr/local/bin:/usr/bin:/bin")
    env.update(HOME=str(home), TMPDIR=str(tmpdir), PWD=str(home), SHELL=shell_path())
    return env


@functools.cache
def shell_path() -> str:
    return shutil.which("bash") or "/bin/sh"


def _is_within(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def _read_exec_paths(workspace: Path, search_path: str) -> list[str]:
    """System, interpreter and ``PATH`` folders, minus any that contain the workspace or home.

    Granting a folder that contains the workspace would grant the workspace's neighbours too.
    """
    home = Path.home().resolve()
    candidates = [
        *SYSTEM_READ_EXEC,
        sys.base_prefix,
        sys.prefix,
        str(Path(shell_path()).resolve().parent),
        *(entry for entry in search_path.split(os.pathsep) if os.path.isabs(entry)),
    ]
    paths: list[str] = []
    for raw in candidates:
        path = Path(raw).resolve()
        if _is_within(workspace, path) or _is_within(home, path) or not path.is_dir():
            continue
        if str(path) not in paths:
            paths.append(str(path))
    return paths


@dataclass(frozen=True)
class SandboxPolicy:
    workspace: Path

    @property
    def state_dir(self) -> Path:
        return self.workspace / SPECWIRE_DIRNAME

    def launcher_argv(self, command: str, tmpdir: Path, environ: Mapping[str, str]) -> list[str]:
        self.state_dir.mkdir(mode=0o700, exist_ok=True)  # the mask needs its mount point
        env = scrubbed_environment(environ, home=self.workspace, tmpdir=tmpdir)
        config = {
            "workspace": str(self.workspace),
            "masks": [str(self.state_dir)],
            "read_exec": _read_exec_paths(self.workspace, env["PATH"]),
            "read_write": [str(tmpdir)],
            "devices": list(DEVICES),
            "argv": [shell_path(), "-c", command],
            "env": env,
        }
        return [sys.executable, "-I", "-S", str(LAUNCHER), json.dumps(config)]


def _probe(workspace: Path) -> str | None:
    """Why a sandboxed shell cannot run here (None when it can)."""
    if not sys.platform.startswith("linux"):
        return f"Landlock and user namespaces are Linux features (this is {sys.platform})"
    with tempfile.TemporaryDirectory(prefix="specwire-sh-") as tmp:
        argv = SandboxPolicy(workspace).launcher_argv("exit 0", Path(tmp), {})
        try:
            done = subprocess.run(argv, capture_output=True, timeout=10, stdin=subprocess.DEVNULL)
        except (OSError, subprocess.TimeoutExpired) as exc:
            return f"the sandbox launcher did not run ({exc})"
    if done.returncode == 0:
        return None
    reason = done.stderr.decode("utf-8", "replace").strip().removeprefix("specwire-sandbox: ")
    return reason or f"the sandbox launcher exited with status {done.returncode}"


@functools.cache
def _cached_probe(workspace: Path) -> str | None:
    return _probe(workspace)


def unsandboxed_opt_in(environ: Mapping[str, str] | None = None) -> bool:
    return (environ if environ is not None else os.environ).get(UNSANDBOXED_ENV) == "1"


def require_sandbox(workspace: Path) -> bool:
    """True when the shell will be sandboxed; False when the operator opted out.

    ``SPECWIRE_UNSANDBOXED_BASH=1`` runs the shell unconfined (a one-line warning says so).
    Otherwise raises ``SandboxUnavailableError`` when no sandbox can be set up here.
    """
    if unsandboxed_opt_in():
        _warn_unsandboxed()
        return False
    reason = _cached_probe(workspace.resolve())
    if reason is None:
        return True
    raise SandboxUnavailableError(
        f"the bash tool needs a sandbox and none can be set up here ({reason}); remove bash "
        f"from the spec's tools, or set {UNSANDBOXED_ENV}=1 to run it unconfined"
    )


@functools.cache
def _warn_unsandboxed() -> None:
    sys.stderr.write(
        f"warning: {UNSANDBOXED_ENV}=1: the bash tool runs without a sandbox; it can read and "
        "write anything this user can, including the agent's memory and session logs\n"
    )
