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

import dataclasses
import functools
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from specwire.runtime.core.paths import SPECWIRE_DIRNAME
from specwire.runtime.safety.redaction import looks_secret
from specwire.runtime.tools.shell.egress import shared_proxy
from specwire.runtime.tools.shell.errors import EgressUnavailableError, SandboxUnavailableError
from specwire.runtime.tools.shell.host_code import (
    LAUNCHER_FILE,
    InterpreterInsideWorkspaceError,
    host_code_in,
    is_within,
    launcher_command,
    launcher_interpreter,
    unreadable_system_files,
)
from specwire.runtime.tools.shell.settings import BashSettings

UNSANDBOXED_ENV = "SPECWIRE_UNSANDBOXED_BASH"
EXTRA_ENV_ENV = "SPECWIRE_BASH_ENV"
LAUNCHER = LAUNCHER_FILE
SETUP_FAILED = 125

SYSTEM_READ_EXEC = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc")
DEVICES = ("/dev/null", "/dev/zero", "/dev/random", "/dev/urandom", "/dev/full")
ENV_ALLOWED = frozenset({"PATH", "LANG", "LANGUAGE", "TERM", "TZ", "USER", "LOGNAME"})
# Never granted, nor anything in them: they hold the host's sockets and other users' files.
NEVER_GRANTED = ("/tmp", "/var/tmp", "/run", "/var/run", "/dev", "/proc", "/sys", "/home", "/root")


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


def _grantable(path: Path, workspace: Path, home: Path) -> bool:
    if is_within(workspace, path) or is_within(home, path) or not path.is_dir():
        return False  # a folder that contains the workspace grants its neighbours too
    return not any(
        is_within(path, Path(never)) or is_within(Path(never), path) for never in NEVER_GRANTED
    )


@functools.lru_cache(maxsize=64)
def _read_exec_paths(workspace: Path, search_path: str) -> tuple[list[str], list[list[str]]]:
    """System, interpreter and ``PATH`` folders, minus any that contain the workspace or home,
    and the links (``/bin`` → ``usr/bin``) to recreate in the sandbox's root."""
    home = Path.home().resolve()
    candidates = [
        *SYSTEM_READ_EXEC,
        sys.base_prefix,
        sys.prefix,
        str(Path(shell_path()).resolve().parent),
        *(entry for entry in search_path.split(os.pathsep) if os.path.isabs(entry)),
    ]
    granted: list[Path] = []
    links: list[list[str]] = []
    for raw in candidates:
        path = Path(raw).resolve()
        if not _grantable(path, workspace, home):
            continue
        link = [raw, os.readlink(raw)] if raw in SYSTEM_READ_EXEC and os.path.islink(raw) else None
        if link is not None and link not in links:
            links.append(link)
        if path not in granted:
            granted.append(path)
    outermost = [p for p in granted if not any(p != o and is_within(p, o) for o in granted)]
    return [str(p) for p in outermost], links


def grantable_folders(paths: Iterable[str], workspace: Path) -> list[str]:
    """Folders to add to the read-and-execute ones for ``paths`` (a program and its absolute
    arguments): an existing folder itself, a file's folder, or for anything in a
    ``node_modules`` tree the folder that holds the outermost one (a package imports its
    neighbours). Never one that contains the workspace or the home folder, nor a host folder
    that is never granted (``/tmp``, ``/run``, ``/home``, ...): those paths are left out."""
    home = Path.home().resolve()
    folders: list[str] = []
    for raw in paths:
        if not os.path.isabs(raw) or not os.path.exists(raw):
            continue
        path = Path(os.path.realpath(raw))
        folder = path if path.is_dir() else path.parent
        if "node_modules" in folder.parts:
            folder = Path(*folder.parts[: folder.parts.index("node_modules")])
        if _grantable(folder, workspace, home) and str(folder) not in folders:
            folders.append(str(folder))
    return folders


@dataclass(frozen=True)
class SandboxPolicy:
    workspace: Path
    settings: BashSettings = BashSettings()

    @property
    def state_dir(self) -> Path:
        return self.workspace / SPECWIRE_DIRNAME

    def launcher_argv(self, command: str, scratch: Path, environ: Mapping[str, str]) -> list[str]:
        """The launcher's command line; ``scratch`` (empty, removed after the call) holds the
        sandbox's temp folder and the mount point of its root."""
        env = scrubbed_environment(environ, home=self.workspace, tmpdir=scratch / "tmp")
        return self.confined_argv([shell_path(), "-c", command], scratch, env)

    def confined_argv(
        self,
        argv: list[str],
        scratch: Path,
        env: dict[str, str],
        *,
        readable: Sequence[str] = (),
        writable: Sequence[Path] = (),
    ) -> list[str]:
        """The launcher's command line that runs ``argv`` (its first word an absolute path)
        confined, with exactly ``env``; ``readable`` folders (from ``grantable_folders``) are
        added to the read-and-execute ones, ``writable`` ones (inside ``scratch``) to the
        temp folder."""
        interpreter = launcher_interpreter(self.workspace)  # refused before anything is made
        self.state_dir.mkdir(mode=0o700, exist_ok=True)  # the mask needs its mount point
        tmpdir, root = scratch / "tmp", scratch / "root"
        for folder in (tmpdir, root, *writable):
            folder.mkdir(mode=0o700, exist_ok=True)
        read_exec, links = _read_exec_paths(self.workspace, env["PATH"])  # cached: not mutated
        config = {
            "root": str(root),
            "workspace": str(self.workspace),
            "read_exec": [*read_exec, *(path for path in readable if path not in read_exec)],
            "read_write": [str(tmpdir), *(str(folder) for folder in writable)],
            "devices": list(DEVICES),
            "links": links,
            "masks": [str(self.state_dir)],
            "protect": host_code_in(self.workspace),
            "hide": list(unreadable_system_files()),
            "limits": self.settings.launcher_limits(),
            "argv": argv,
            "env": env,
            "egress": self._egress_socket(),
        }
        return launcher_command(interpreter, config)

    def _egress_socket(self) -> str | None:
        """The egress proxy's socket (``network: outbound`` only), started on first use."""
        if self.settings.network != "outbound":
            return None
        try:
            proxy = shared_proxy()
        except OSError as exc:
            raise EgressUnavailableError(f"cannot start the egress proxy: {exc}") from exc
        if is_within(proxy.folder.resolve(), self.workspace):
            raise EgressUnavailableError(
                f"the egress proxy's folder ({proxy.folder}) lies in the workspace; set TMPDIR "
                f"to a folder outside {self.workspace}"
            )
        return str(proxy.socket_path)


def _probe(workspace: Path, settings: BashSettings) -> str | None:
    """Why a sandboxed shell cannot run here (None when it can)."""
    if not sys.platform.startswith("linux"):
        return f"Landlock and user namespaces are Linux features (this is {sys.platform})"
    with tempfile.TemporaryDirectory(prefix="specwire-sh-") as tmp:
        try:
            # The proxy starts on the first outbound call, not here: the probe checks the rest.
            probed = dataclasses.replace(settings, network="none")
            argv = SandboxPolicy(workspace, probed).launcher_argv("exit 0", Path(tmp), {})
        except InterpreterInsideWorkspaceError as exc:
            return str(exc)
        try:
            done = subprocess.run(argv, capture_output=True, timeout=10, stdin=subprocess.DEVNULL)
        except (OSError, subprocess.TimeoutExpired) as exc:
            return f"the sandbox launcher did not run ({exc})"
    if done.returncode == 0:
        return None
    reason = done.stderr.decode("utf-8", "replace").strip().removeprefix("specwire-sandbox: ")
    return reason or f"the sandbox launcher exited with status {done.returncode}"


@functools.cache
def _cached_probe(workspace: Path, settings: BashSettings) -> str | None:
    return _probe(workspace, settings)


def sandbox_unavailable(workspace: Path, settings: BashSettings | None = None) -> str | None:
    """Why no sandbox can be set up here for ``workspace`` (None when one can); probed once."""
    return _cached_probe(workspace.resolve(), settings or BashSettings())


def unsandboxed_opt_in(environ: Mapping[str, str] | None = None) -> bool:
    return (environ if environ is not None else os.environ).get(UNSANDBOXED_ENV) == "1"


def require_sandbox(workspace: Path, settings: BashSettings | None = None) -> bool:
    """True when the shell will be sandboxed; False when the operator opted out.

    ``SPECWIRE_UNSANDBOXED_BASH=1`` runs the shell unconfined (a one-line warning says so).
    Otherwise raises ``SandboxUnavailableError`` when no sandbox can be set up here.
    """
    if unsandboxed_opt_in():
        _warn_unsandboxed()
        return False
    reason = sandbox_unavailable(workspace, settings)
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
