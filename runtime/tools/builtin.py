"""Builtin tools a spec may list under ``tools:`` (read, write, ls, grep, bash).

All of them work inside one working directory (``cwd``). The file tools resolve every path
through ``runtime.fs.beneath.Workspace``: component by component, relative to directory
descriptors, with ``O_NOFOLLOW``, so a path that leads outside (``..``, an absolute path, a
symlink pointing out) is refused and a directory swapped for a symlink while a tool runs cannot
redirect it (no check-then-use). Symlinks that stay inside the working directory are followed;
``ls`` marks them with ``@``; ``grep`` does not follow them while it walks a directory (as
``grep -r``), only when they are named. Only regular files are read: a FIFO or a device is
refused, never opened in a way that could hang. ``grep`` runs its pattern in a child process
under a time limit (a pattern like ``(a+)+`` can take exponential time) and reports what it
found before the limit. ``write`` refuses ``.specwire/``, where the agent's memory and session
logs live: those change only through their own tools, so the model cannot forge the evidence
the proof ladder reads. Outputs are capped.
"""

from __future__ import annotations

import codecs
import errno
import os
import re
import stat
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from specwire.runtime.core.errors import UnsafeFileError
from specwire.runtime.core.fragment import BUILTIN_TOOL_NAMES
from specwire.runtime.core.paths import SPECWIRE_DIRNAME
from specwire.runtime.core.tool_types import (
    LazyInput,
    Tool,
    ToolCatalog,
    ToolContext,
    ToolRefusal,
    ToolResult,
    guarded,
)
from specwire.runtime.fs.atomic import replace_at
from specwire.runtime.fs.beneath import Location, PathRefused, Workspace
from specwire.runtime.fs.safe_open import DIR_FLAGS, not_regular, open_dir_beneath, open_regular_fd
from specwire.runtime.tools.shell.limits import BASH_MAX_OUTPUT_BYTES
from specwire.runtime.tools.shell.settings import BashSettings

if TYPE_CHECKING:
    from specwire.runtime.tools.builtin_inputs import GrepInput, LsInput, ReadInput, WriteInput
    from specwire.runtime.tools.shell.inputs import BashInput

READ_MAX_BYTES = 256 * 1024
WRITE_MAX_BYTES = 1024 * 1024
LS_MAX_ENTRIES = 1000
GREP_MAX_MATCHES = 200
GREP_MAX_FILE_BYTES = 1024 * 1024
GREP_MAX_LINE_CHARS = 300
GREP_TIME_LIMIT_S = 3.0
GREP_SKIP_DIRS = frozenset({".git", SPECWIRE_DIRNAME, ".venv", "node_modules", "__pycache__"})
# A name that turned into a symlink between resolving and opening is resolved again this often.
OPEN_ATTEMPTS = 3


def _decode_text(data: bytes) -> str | None:
    """UTF-8 text (an incomplete trailing character is dropped), or None for binary data."""
    if b"\x00" in data:
        return None
    try:
        return codecs.getincrementaldecoder("utf-8")().decode(data, final=False)
    except UnicodeDecodeError:
        return None


def _lstat_mode(loc: Location) -> int | None:
    assert loc.name is not None
    try:
        return os.stat(loc.name, dir_fd=loc.dir_fd, follow_symlinks=False).st_mode
    except FileNotFoundError:
        return None


def _open_located(
    ws: Workspace, raw: str, open_one: Callable[[Location], int]
) -> tuple[Location, int]:
    """Locate ``raw`` and open it with ``open_one`` (which opens with ``O_NOFOLLOW``); a name
    that became a symlink in between is located again, a few times."""
    for attempt in range(OPEN_ATTEMPTS):
        loc = ws.locate(raw, guard=_outside_the_state_folder)
        try:
            return loc, open_one(loc)
        except _Swapped:
            loc.close()
            if attempt == OPEN_ATTEMPTS - 1:
                raise ToolRefusal(f"{raw!r} kept changing while it was being opened") from None
        except BaseException:
            loc.close()
            raise
    raise AssertionError("unreachable")


class _Swapped(Exception):
    """The last component became a symlink after it was located."""


# -- read ------------------------------------------------------------------------------------


def _open_file(raw: str) -> Callable[[Location], int]:
    def open_one(loc: Location) -> int:
        if loc.name is None:
            raise ToolRefusal(f"{raw!r} is not a file")
        try:
            return open_regular_fd(loc.name, dir_fd=loc.dir_fd, label=repr(raw))
        except FileNotFoundError:
            raise ToolRefusal(f"{raw!r} is not a file") from None
        except UnsafeFileError as exc:
            mode = _lstat_mode(loc)
            if mode is not None and stat.S_ISLNK(mode):
                raise _Swapped from None
            if mode is not None and stat.S_ISDIR(mode):
                raise ToolRefusal(f"{raw!r} is not a file") from None
            raise ToolRefusal(str(exc)) from None

    return open_one


def _read(cwd: Path, parsed: ReadInput) -> ToolResult:
    loc, fd = _open_located(Workspace(cwd), parsed.path, _open_file(parsed.path))
    loc.close()
    with os.fdopen(fd, "rb") as handle:
        size = os.fstat(handle.fileno()).st_size
        data = handle.read(READ_MAX_BYTES)
    text = _decode_text(data)
    if text is None:
        raise ToolRefusal(f"{parsed.path!r} is not a UTF-8 text file")
    if size > READ_MAX_BYTES:
        text += f"\n[truncated: showing the first {READ_MAX_BYTES} of {size} bytes]"
    return ToolResult(text)


def read_workspace_text(cwd: Path, raw: str, max_bytes: int = READ_MAX_BYTES) -> tuple[str, int]:
    """The first ``max_bytes`` of the UTF-8 text file ``raw`` beneath ``cwd`` and its size, with
    the read tool's fences (no way out of ``cwd`` or into its state folder, no symlink swapped
    in, regular files only); ``ToolRefusal`` says why not."""
    loc, fd = _open_located(Workspace(cwd), raw, _open_file(raw))
    loc.close()
    with os.fdopen(fd, "rb") as handle:
        size = os.fstat(handle.fileno()).st_size
        data = handle.read(max_bytes)
    text = _decode_text(data)
    if text is None:
        raise ToolRefusal(f"{raw!r} is not a UTF-8 text file")
    return text, size


# -- write -----------------------------------------------------------------------------------


def _state_folder_guard(refusal: str) -> Callable[[tuple[str, ...]], None]:
    """A ``locate`` guard refusing any path into the state folder: every conversation's session
    log, the facts and the evidence key live there, and only the memory tools go in."""

    def guard(parts: tuple[str, ...]) -> None:
        if parts[0] == SPECWIRE_DIRNAME:
            raise PathRefused(refusal)

    return guard


_not_the_state_folder = _state_folder_guard(
    f"refusing to write under {SPECWIRE_DIRNAME}/: memory, plans and session logs change only "
    "through their own tools"
)
_outside_the_state_folder = _state_folder_guard(
    f"{SPECWIRE_DIRNAME}/ holds the agent's memory and session logs: use the memory tools "
    "(Recall, FocusRead, PlanRead) instead"
)


def _write(cwd: Path, parsed: WriteInput) -> ToolResult:
    data = parsed.content.encode("utf-8")
    if len(data) > WRITE_MAX_BYTES:
        raise ToolRefusal(f"content is {len(data)} bytes; the limit is {WRITE_MAX_BYTES}")
    ws = Workspace(cwd)
    with ws.locate(parsed.path, create_dirs=True, guard=_not_the_state_folder) as loc:
        if loc.name is None:
            raise ToolRefusal(f"{parsed.path!r} is a directory")
        mode = _lstat_mode(loc)
        if mode is not None and stat.S_ISDIR(mode):
            raise ToolRefusal(f"{parsed.path!r} is a directory")
        # The temporary is created and renamed inside the directory that was located.
        replace_at(loc.dir_fd, loc.name, data)
        return ToolResult(f"wrote {len(data)} bytes to {loc.shown}")


# -- ls --------------------------------------------------------------------------------------


def _open_directory(raw: str) -> Callable[[Location], int]:
    def open_one(loc: Location) -> int:
        if loc.name is None:
            return os.dup(loc.dir_fd)
        try:
            return os.open(loc.name, DIR_FLAGS, dir_fd=loc.dir_fd)
        except OSError as exc:
            if exc.errno not in (errno.ENOENT, errno.ENOTDIR, errno.ELOOP):
                raise
            mode = _lstat_mode(loc)
            if mode is not None and stat.S_ISLNK(mode):
                raise _Swapped from None
            raise ToolRefusal(f"{raw!r} is not a directory") from None

    return open_one


def _entry_name(entry: os.DirEntry[str]) -> str:
    if entry.is_symlink():
        return f"{entry.name}@"
    return f"{entry.name}/" if entry.is_dir(follow_symlinks=False) else entry.name


def _ls(cwd: Path, parsed: LsInput) -> ToolResult:
    loc, fd = _open_located(Workspace(cwd), parsed.path, _open_directory(parsed.path))
    shown = loc.shown
    loc.close()
    try:
        with os.scandir(fd) as listing:
            entries = sorted(_entry_name(entry) for entry in listing)
    finally:
        os.close(fd)
    if not entries:
        return ToolResult(f"{shown}: (empty directory)")
    listed = entries[:LS_MAX_ENTRIES]
    if len(entries) > LS_MAX_ENTRIES:
        listed.append(f"[{len(entries) - LS_MAX_ENTRIES} more entries not shown]")
    return ToolResult("\n".join(listed))


# -- grep ------------------------------------------------------------------------------------


class _Search:
    """What one grep searches: files (as parts below ``base_fd``) shown under ``prefix``."""

    def __init__(self, base_fd: int, prefix: tuple[str, ...], files: list[tuple[str, ...]]):
        self.base_fd = base_fd
        self.prefix = prefix
        self.files = files

    def texts(self) -> Iterator[tuple[str, str]]:
        """Each file's text, opened below ``base_fd`` without following any link."""
        for parts in self.files:
            text = self._text(parts)
            if text is not None:
                yield "/".join((*self.prefix, *parts)), text

    def _text(self, parts: tuple[str, ...]) -> str | None:
        try:
            dir_fd = open_dir_beneath(self.base_fd, parts[:-1])
            if dir_fd is None:
                return None
            try:
                fd = open_regular_fd(parts[-1], dir_fd=dir_fd)
            finally:
                os.close(dir_fd)
        except (OSError, UnsafeFileError):
            return None  # gone, swapped for a link or a FIFO since it was listed: skipped
        with os.fdopen(fd, "rb") as handle:
            if os.fstat(handle.fileno()).st_size > GREP_MAX_FILE_BYTES:
                return None
            return _decode_text(handle.read(GREP_MAX_FILE_BYTES + 1))


def _list_files(base_fd: int, deadline: float) -> tuple[list[tuple[str, ...]], bool]:
    """Regular files below ``base_fd`` (links are not followed), sorted by path; True when the
    deadline cut the listing short."""
    found: list[tuple[str, ...]] = []
    pending: list[tuple[str, ...]] = [()]
    while pending:
        if time.monotonic() >= deadline:
            return sorted(found, key="/".join), True
        parts = pending.pop()
        try:
            dir_fd = open_dir_beneath(base_fd, parts)
        except (OSError, UnsafeFileError):
            continue
        if dir_fd is None:
            continue
        try:
            with os.scandir(dir_fd) as listing:
                for entry in listing:
                    if entry.is_dir(follow_symlinks=False):
                        if entry.name not in GREP_SKIP_DIRS:
                            pending.append((*parts, entry.name))
                    elif entry.is_file(follow_symlinks=False):
                        found.append((*parts, entry.name))
        except OSError:
            pass
        finally:
            os.close(dir_fd)
    return sorted(found, key="/".join), False


def _grep_base(raw: str) -> Callable[[Location], int]:
    """Opens what to search: the located directory, or the directory of the one file named
    (left as ``loc.name``; its directory is then ``loc.dir_fd`` itself, duplicated)."""
    as_directory = _open_directory(raw)

    def open_one(loc: Location) -> int:
        if loc.name is None:
            return os.dup(loc.dir_fd)
        mode = _lstat_mode(loc)
        if mode is None:
            raise ToolRefusal(f"{raw!r} does not exist")
        if stat.S_ISDIR(mode) or stat.S_ISLNK(mode):
            fd = as_directory(loc)
            loc.name = None  # the search starts inside it
            return fd
        if not stat.S_ISREG(mode):
            raise ToolRefusal(str(not_regular(repr(raw), mode)))
        return os.dup(loc.dir_fd)

    return open_one


def _grep(cwd: Path, parsed: GrepInput) -> ToolResult:
    from specwire.runtime.tools.grep_search import RegexRun, search_lines  # on the first grep

    try:
        re.compile(parsed.pattern)
    except re.error as exc:
        raise ToolRefusal(f"invalid pattern: {exc}") from None
    deadline = time.monotonic() + GREP_TIME_LIMIT_S
    loc, base_fd = _open_located(Workspace(cwd), parsed.path, _grep_base(parsed.path))
    loc.close()
    try:
        if loc.name is not None:  # one file
            search, listing_cut = _Search(base_fd, loc.parts[:-1], [(loc.name,)]), False
        else:
            files, listing_cut = _list_files(base_fd, deadline)
            search = _Search(base_fd, loc.parts, files)
        run = (
            search_lines(
                parsed.pattern,
                search.texts(),
                max_matches=GREP_MAX_MATCHES,
                max_line_chars=GREP_MAX_LINE_CHARS,
                deadline=deadline,
            )
            if search.files
            else RegexRun()
        )
    finally:
        os.close(base_fd)
    lines = [f"{m.source}:{m.line_no}: {m.line}" for m in run.matches]
    if run.failure is not None:
        return ToolResult("\n".join([*lines, f"grep: {run.failure}"]), True)
    if run.timed_out or listing_cut:
        return ToolResult("\n".join([*lines, _stopped_notice(len(lines), run.timed_out)]), True)
    if not lines:
        return ToolResult(f"no matches for /{parsed.pattern}/ in {parsed.path}")
    if run.capped:
        lines.append(f"[output capped at {GREP_MAX_MATCHES} matches; narrow the pattern or path]")
    return ToolResult("\n".join(lines))


def _stopped_notice(found: int, slow_pattern: bool) -> str:
    why = (
        "the pattern is too slow on this input (nested repetition such as (a+)+ can take "
        "exponential time)"
        if slow_pattern
        else "listing the files took too long"
    )
    return (
        f"grep: stopped after the {GREP_TIME_LIMIT_S:g}s time limit: {why}; the {found} "
        "match(es) above were found before it — simplify the pattern or narrow the path"
    )


# -- bash --------------------------------------------------------------------------------------


def _bash(cwd: Path, parsed: BashInput, settings: BashSettings) -> ToolResult:
    from specwire.runtime.tools.shell.tool import run_bash  # with the sandbox, on the first call

    return run_bash(cwd, parsed, settings)


# -- the catalog ------------------------------------------------------------------------------

_Run = Callable[[Path, Any], ToolResult]


def _input(module: str, name: str) -> LazyInput:
    return LazyInput(f"specwire.runtime.{module}", name)


# Each tool's input model is imported (with pydantic) on the tool's first call.
_SPECS: dict[str, tuple[str, LazyInput, _Run | None, dict[str, Any]]] = {
    "read": (
        f"Read a UTF-8 text file under the working directory (first {READ_MAX_BYTES} bytes).",
        _input("tools.builtin_inputs", "ReadInput"),
        _read,
        {"read_only": True},
    ),
    "write": (
        "Create or replace a text file under the working directory (atomic).",
        _input("tools.builtin_inputs", "WriteInput"),
        _write,
        {"destructive": True},
    ),
    "ls": (
        "List a directory under the working directory, sorted; directories end with '/', "
        "symbolic links with '@'.",
        _input("tools.builtin_inputs", "LsInput"),
        _ls,
        {"read_only": True},
    ),
    "grep": (
        f"Search files under the working directory for a regex; at most {GREP_MAX_MATCHES} "
        f"matching lines as path:line: text, within {GREP_TIME_LIMIT_S:g}s.",
        _input("tools.builtin_inputs", "GrepInput"),
        _grep,
        {"read_only": True},
    ),
    "bash": (
        "Run a shell command in the working directory with a timeout; stdout and stderr are "
        f"combined and capped at {BASH_MAX_OUTPUT_BYTES} bytes.",
        _input("tools.shell.inputs", "BashInput"),
        None,  # _bash: it takes the spec's settings
        {"destructive": True, "scope": "external"},
    ),
}


def _tool(name: str, cwd: Path, bash: BashSettings) -> Tool:
    description, input_model, run, flags = _SPECS[name]

    def handle(parsed: Any, ctx: ToolContext) -> ToolResult:
        if run is None:
            return _bash(cwd, parsed, bash)
        return run(cwd, parsed)

    return Tool(name, description, input_model, guarded(name, handle), **flags)


def builtin_catalog(
    names: Sequence[str], cwd: Path | None = None, bash: Mapping[str, object] | None = None
) -> ToolCatalog:
    """A catalog with the named builtin tools, registered in the given order.

    ``bash`` holds the spec's options for the bash tool (network, limits; see
    ``runtime.tools.shell.settings``).
    """
    unknown = [name for name in names if name not in _SPECS]
    if unknown:
        raise ValueError(
            f"unknown builtin tool(s) {', '.join(map(repr, unknown))}; "
            f"known: {', '.join(BUILTIN_TOOL_NAMES)}"
        )
    root = (cwd if cwd is not None else Path.cwd()).resolve()
    settings = BashSettings.from_spec(bash)
    if "bash" in names:
        from specwire.runtime.tools.shell.sandbox import require_sandbox

        require_sandbox(root, settings)  # refuse to start rather than run a shell unconfined
    catalog = ToolCatalog()
    for name in names:
        catalog.register(_tool(name, root, settings))
    return catalog
