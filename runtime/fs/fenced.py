"""Fenced file I/O for the continuity store: atomic 0600 writes, tolerant reads.

Every path is first checked with ``assert_inside(path, root)`` (a path or symlink that escapes
the store's root fails closed with ``TenancyError``), then opened for real one component at a
time below the root, each relative to its parent's descriptor with ``O_NOFOLLOW``: nothing in a
state folder is reached through a symlink, so a component swapped between the check and the use
cannot redirect a read or a write. Only regular files are read or replaced: a FIFO, device or
socket where a state file belongs is refused at once with ``UnsafeFileError`` naming the file,
never opened in a way that could hang.

Writes go through a temporary file and a rename in the opened directory; ``sweep_stale_temps``
removes the temporaries a killed writer left behind.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Sequence
from pathlib import Path

from specwire.runtime.core.errors import StoreError, TenancyError
from specwire.runtime.core.tenancy import resolve_inside
from specwire.runtime.fs.atomic import has_temps, replace_at, sweep_temps
from specwire.runtime.fs.locking import FileLock
from specwire.runtime.fs.safe_open import (
    not_regular,
    open_dir_beneath,
    open_regular_fd,
    symlink_refused,
    text_mode,
)

FILE_MODE = 0o600
DIR_MODE = 0o700

IsOurs = Callable[[str], bool]


def _below(path: Path, root: Path) -> tuple[Path, tuple[str, ...]]:
    """(the resolved root, the parts of ``path`` below it, as spelled: a link among them is
    refused when it is opened, never resolved here)."""
    root_resolved = resolve_inside(path, root)[1]
    spelled = Path(os.path.normpath(path.absolute()))
    for base in (root_resolved, Path(os.path.normpath(root.absolute()))):
        if spelled.is_relative_to(base):
            return root_resolved, spelled.relative_to(base).parts
    raise TenancyError(f"cross-tenant access denied: {spelled} is outside {root_resolved}")


def _locate(path: Path, root: Path) -> tuple[Path, tuple[str, ...]]:
    root_resolved, parts = _below(path, root)
    if not parts:
        raise StoreError(f"{path} is the store's root, not a file in it")
    return root_resolved, parts


def _label(parts: Sequence[str]) -> str:
    return "/".join(parts)


def write_atomic(path: Path, text: str, *, root: Path) -> Path:
    """Write ``text`` to ``path`` through a temporary file and a rename (mode 0600)."""
    root_resolved, parts = _locate(path, root)
    dir_fd = open_dir_beneath(root_resolved, parts[:-1], create=True, mode=DIR_MODE)
    assert dir_fd is not None  # created
    try:
        try:
            mode = os.stat(parts[-1], dir_fd=dir_fd, follow_symlinks=False).st_mode
        except FileNotFoundError:
            mode = stat.S_IFREG
        if stat.S_ISLNK(mode):
            raise symlink_refused(_label(parts))
        if not stat.S_ISREG(mode):
            raise not_regular(_label(parts), mode)
        replace_at(dir_fd, parts[-1], text.encode("utf-8"), mode=FILE_MODE)
    finally:
        os.close(dir_fd)
    return path


def read_text(path: Path, *, root: Path) -> str | None:
    """The file's text (newlines normalized as text mode does), or None when it does not
    exist. Never locks, never blocks."""
    root_resolved, parts = _locate(path, root)
    dir_fd = open_dir_beneath(root_resolved, parts[:-1])
    if dir_fd is None:
        return None
    try:
        try:
            fd = open_regular_fd(parts[-1], dir_fd=dir_fd, label=_label(parts))
        except (FileNotFoundError, NotADirectoryError):
            return None
    finally:
        os.close(dir_fd)
    with os.fdopen(fd, "rb") as handle:
        data = handle.read()
    return text_mode(data)


def _each_dir(
    targets: Sequence[tuple[Path, IsOurs]], root: Path
) -> list[tuple[int, IsOurs, tuple[str, ...]]]:
    opened: list[tuple[int, IsOurs, tuple[str, ...]]] = []
    for directory, is_ours in targets:
        root_resolved, parts = _below(directory, root)
        fd = open_dir_beneath(root_resolved, parts)
        if fd is not None:
            opened.append((fd, is_ours, parts))
    return opened


def sweep_stale_temps(
    targets: Sequence[tuple[Path, IsOurs]], *, root: Path, lock: FileLock
) -> list[str]:
    """Remove the temporaries killed writers left in each directory (only names ``is_ours``
    accepts), holding ``lock`` — the lock every writer there holds — so no live writer's
    temporary is taken. Never waits: with the lock busy, nothing is done (the next open
    sweeps). Returns the removed files, relative to ``root``."""
    opened = _each_dir(targets, root)
    try:
        if not any(has_temps(fd, is_ours) for fd, is_ours, _ in opened):
            return []
        if not lock.try_acquire():
            return []
        try:
            return [
                _label((*parts, name))
                for fd, is_ours, parts in opened
                for name in sweep_temps(fd, is_ours)
            ]
        finally:
            lock.release()
    finally:
        for fd, _, _ in opened:
            os.close(fd)
