"""Code that runs outside the sandbox, and where it lies relative to what the sandbox may write.

Two guards keep a hostile shell from planting code that later runs unconfined:

* the launcher runs on an interpreter (and its standard library and ``libpython``) that lies
  outside the workspace; its own text is read once, here, when the host starts, and passed on
  the command line, so no file is read from disk between one call and the next;
* every place inside the workspace that this host loads Python code from (the ``runtime``
  package of an editable install, a ``.venv``, a ``PYTHONPATH`` folder) is bound read-only in
  the sandbox, so the next host start, or a lazy import of this one, never runs a patched file.

What neither guard covers, and is said in the README: a host started with the workspace itself
on ``sys.path`` (``python -m …`` run from inside it without ``-P``) imports any new module the
shell writes there; start bundles with the ``codegen`` command or ``python -P``.
"""

from __future__ import annotations

import functools
import marshal
import os
import stat
import sys
import sysconfig
from collections.abc import Mapping
from pathlib import Path

LAUNCHER_FILE = Path(__file__).with_name("launch.py")
# Read and compiled once at host start, never again: a later change on disk is not run by this
# host. Passed as a marshal-ed code object (the launcher runs on this very interpreter binary),
# which spares each call compiling it.
LAUNCHER_CODE = marshal.dumps(
    compile(LAUNCHER_FILE.read_text(encoding="utf-8"), "<specwire-sandbox>", "exec")
).hex()
_BOOTSTRAP = "import marshal,sys;exec(marshal.loads(bytes.fromhex(sys.argv[1])))"
# What the launcher imports: their files must lie outside the workspace as the interpreter does.
_LAUNCHER_MODULES = ("os", "ctypes", "resource", "_ctypes", "encodings")


class InterpreterInsideWorkspaceError(RuntimeError):
    """The only interpreter the launcher could use lies where the sandbox may write."""


def is_within(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def _real(path: str) -> Path:
    return Path(os.path.realpath(path))


@functools.cache
def _interpreter_files() -> tuple[Path, ...]:
    """The interpreter, ``libpython`` and the launcher's standard-library modules, resolved."""
    files = [_real(sys.executable)]
    if sysconfig.get_config_var("Py_ENABLE_SHARED"):
        libdir = sysconfig.get_config_var("LIBDIR")
        library = sysconfig.get_config_var("LDLIBRARY")
        if isinstance(libdir, str) and isinstance(library, str):
            files.append(_real(os.path.join(libdir, library)))
    for name in _LAUNCHER_MODULES:
        module = __import__(name)
        location = getattr(module, "__file__", None)
        if isinstance(location, str):
            files.append(_real(location))
    return tuple(files)


def launcher_interpreter(workspace: Path) -> str:
    """The resolved interpreter to run the launcher with, verified outside the workspace.

    A ``.venv``'s ``python`` is a link to its base interpreter: the base one runs the launcher
    (``-I -S``: its own standard library, no site-packages), wherever the ``.venv`` lies.
    """
    files = _interpreter_files()
    inside = [str(f) for f in files if is_within(f, workspace)]
    if inside:
        raise InterpreterInsideWorkspaceError(
            f"the Python interpreter the sandbox would start from lies in the workspace "
            f"({inside[0]}), where the shell could rewrite it; install Python outside {workspace}"
        )
    return str(files[0])


def launcher_command(interpreter: str, config: Mapping[str, object]) -> list[str]:
    """The launcher's command line: nothing in it is read from disk."""
    return [
        interpreter,
        "-I",
        "-S",
        "-c",
        _BOOTSTRAP,
        LAUNCHER_CODE,
        marshal.dumps(dict(config)).hex(),
    ]


def _module_locations(module: object) -> list[str]:
    paths = getattr(module, "__path__", None)
    if paths is not None:
        return [p for p in paths if isinstance(p, str)]
    location = getattr(module, "__file__", None)
    return [location] if isinstance(location, str) else []


def _outermost(paths: set[Path]) -> list[str]:
    ordered = sorted(paths)
    kept: list[Path] = []
    for path in ordered:
        if not any(is_within(path, outer) for outer in kept):
            kept.append(path)
    return [str(p) for p in kept]


def _host_code_in(workspace: Path) -> list[str]:
    found: set[Path] = set()
    roots = [sys.prefix, sys.exec_prefix, sys.base_prefix, *(entry or "." for entry in sys.path)]
    for root in roots:
        path = _real(root)
        if is_within(path, workspace) and path != workspace:
            found.add(path)
    for name, module in list(sys.modules.items()):
        if "." in name:
            continue  # a submodule lies in its top-level package's folder
        for location in _module_locations(module):
            path = _real(location)
            if is_within(path, workspace) and path != workspace:
                found.add(path)
    return _outermost(found)


_seen: dict[Path, tuple[int, tuple[str, ...], list[str]]] = {}


def host_code_in(workspace: Path) -> list[str]:
    """The outermost folders and files inside ``workspace`` that this host loads code from.

    Recomputed when a module was imported or ``sys.path`` changed since the last call.
    """
    key = (len(sys.modules), tuple(sys.path))
    cached = _seen.get(workspace)
    if cached is not None and cached[:2] == key:
        return cached[2]
    paths = _host_code_in(workspace)
    _seen[workspace] = (*key, paths)
    return paths


@functools.cache
def unreadable_system_files(root: str = "/etc") -> tuple[str, ...]:
    """Files and folders under ``root`` that others may not read (shadow, ssh host keys, …).

    Root reads them anyway, and the sandbox maps this user to itself: they are covered inside.
    Read once per host process.
    """
    hidden: list[str] = []
    for folder, dirs, files in os.walk(root):
        for name in sorted(dirs):
            path = os.path.join(folder, name)
            try:
                mode = os.lstat(path).st_mode
            except OSError:
                continue
            if stat.S_ISDIR(mode) and (mode & 0o005) != 0o005:
                hidden.append(path)
                dirs.remove(name)  # covered whole
        for name in files:
            path = os.path.join(folder, name)
            try:
                mode = os.lstat(path).st_mode
            except OSError:
                continue
            if stat.S_ISREG(mode) and not mode & stat.S_IROTH:
                hidden.append(path)
    return tuple(sorted(hidden))
