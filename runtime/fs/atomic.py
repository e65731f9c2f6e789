"""Atomic file replacement: a temporary file beside the target, fsync, then rename.

A reader sees the old bytes or the new ones, never a mix; a failed write leaves the old file.
``replace_at`` works relative to a descriptor of the target's directory: the temporary is
created there with ``O_EXCL|O_NOFOLLOW`` and renamed within it, so a directory swapped for a
symlink while a write runs cannot redirect the write anywhere else.

A writer killed between creating its temporary and renaming it leaves ``.<name>.<8 chars>.tmp``
behind. ``sweep_temps`` removes such leftovers; callers run it under the lock their writers hold,
so a live writer's temporary is never taken from under it.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable
from pathlib import Path

from specwire.runtime.core.ids import random_hex
from specwire.runtime.core.patterns import LazyPattern

# Also matches the names of ``tempfile.mkstemp`` (used by earlier versions): same shape.
TEMP_RE = LazyPattern(r"^\.(?P<target>.+)\.[a-z0-9_]{8}\.tmp$")


def temp_name(name: str) -> str:
    return f".{name}.{random_hex(4)}.tmp"


def _create_temp(dir_fd: int, name: str, mode: int) -> tuple[int, str]:
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    while True:
        tmp = temp_name(name)
        try:
            return os.open(tmp, flags, mode, dir_fd=dir_fd), tmp
        except FileExistsError:
            continue


def replace_at(dir_fd: int, name: str, data: bytes, *, mode: int | None = None) -> None:
    """Replace ``name`` in the directory ``dir_fd`` with ``data``. ``mode`` sets the
    permissions exactly (default: what the process umask gives a new file)."""
    if "/" in name or name in ("", ".", ".."):
        raise ValueError(f"not a file name: {name!r}")
    fd, tmp = _create_temp(dir_fd, name, 0o666 if mode is None else mode)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            if mode is not None:
                os.fchmod(handle.fileno(), mode)  # the umask may have dropped bits
            os.fsync(handle.fileno())
        os.rename(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp, dir_fd=dir_fd)
        raise
    with contextlib.suppress(OSError):  # some file systems refuse fsync on a directory
        os.fsync(dir_fd)


def replace_atomically(target: Path, data: bytes, *, mode: int | None = None) -> None:
    """``replace_at`` for a path whose parent directory exists (and is trusted)."""
    dir_fd = os.open(target.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        replace_at(dir_fd, target.name, data, mode=mode)
    finally:
        os.close(dir_fd)


def sweep_temps(dir_fd: int, is_ours: Callable[[str], bool]) -> list[str]:
    """Remove the leftover temporaries in ``dir_fd`` whose target name ``is_ours``; returns the
    names removed. Only regular files matching ``TEMP_RE`` are touched."""
    removed: list[str] = []
    with os.scandir(dir_fd) as entries:
        stale = [
            entry.name
            for entry in entries
            if (match := TEMP_RE.match(entry.name)) is not None
            and is_ours(match.group("target"))
            and entry.is_file(follow_symlinks=False)
        ]
    for name in sorted(stale):
        with contextlib.suppress(FileNotFoundError):
            os.unlink(name, dir_fd=dir_fd)
            removed.append(name)
    return removed


def has_temps(dir_fd: int, is_ours: Callable[[str], bool]) -> bool:
    with os.scandir(dir_fd) as entries:
        return any(
            (match := TEMP_RE.match(entry.name)) is not None and is_ours(match.group("target"))
            for entry in entries
        )
