"""Walking a vault folder without ever leaving it.

The vault's folder is opened beneath the agent's folder one component at a time, never
following a symlink (``open_dir_beneath``); inside it, every directory is opened relative to
its parent's descriptor with ``O_NOFOLLOW`` and every note with ``open_regular_fd`` (no symlink,
no FIFO or device). Symlinks are skipped, as are hidden entries (``.obsidian``, ``.git``,
``.trash``) and anything that is not ``*.md``. The walk is bounded: ``MAX_DEPTH`` levels,
``MAX_NOTES`` notes, and a note larger than ``MAX_NOTE_BYTES`` is skipped.

``listing`` is the cheap part (names, sizes, modification times: what says a note changed);
``read_note`` reads one note's text.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import NamedTuple

from specwire.runtime.core.errors import UnsafeFileError
from specwire.runtime.fs.safe_open import DIR_FLAGS, open_regular_fd

MAX_DEPTH = 16
MAX_NOTES = 10_000
MAX_NOTE_BYTES = 256 * 1024
NOTE_SUFFIX = ".md"


class Entry(NamedTuple):
    """A note as the listing sees it (a tuple: compared in C, a listing is compared whole)."""

    path: str  # relative, "/"-separated
    mtime_ns: int
    size: int


@dataclass(frozen=True)
class Listing:
    entries: tuple[Entry, ...]  # in walk order (each folder's entries by name)
    # Left out: too large, past MAX_NOTES or MAX_DEPTH (symlinks and hidden entries are not
    # counted: they are never part of a vault).
    skipped: int


def check_vault_path(path: str) -> tuple[str, ...]:
    """The parts of a vault path relative to the agent's folder; ``ValueError`` for an
    absolute path, ``..`` or an empty one."""
    pure = PurePosixPath(path)
    if pure.is_absolute() or "\\" in path or "\x00" in path:
        raise ValueError("a vault path must be relative to the agent's folder")
    parts = tuple(part for part in pure.parts if part not in ("", "."))
    if not parts or ".." in parts:
        raise ValueError("a vault path must name a folder inside the agent's folder")
    return parts


def listing(root_fd: int) -> Listing:
    entries: list[Entry] = []
    skipped = _walk(root_fd, "", 0, entries)
    return Listing(tuple(entries), skipped)


def _walk(dir_fd: int, prefix: str, depth: int, entries: list[Entry]) -> int:
    skipped = 0
    with os.scandir(dir_fd) as found:
        children = sorted(found, key=lambda entry: entry.name)
    for child in children:
        name = child.name
        if name.startswith(".") or child.is_symlink():
            continue
        is_note = name.endswith(NOTE_SUFFIX)
        if not is_note and not child.is_dir(follow_symlinks=False):
            continue
        try:
            info = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
        except OSError:
            continue  # removed meanwhile
        if stat.S_ISDIR(info.st_mode):
            if depth + 1 >= MAX_DEPTH:
                skipped += 1
                continue
            try:
                sub = os.open(name, DIR_FLAGS, dir_fd=dir_fd)
            except OSError:
                continue  # swapped for a symlink or removed meanwhile: never followed
            try:
                skipped += _walk(sub, f"{prefix}{name}/", depth + 1, entries)
            finally:
                os.close(sub)
        elif stat.S_ISREG(info.st_mode) and name.endswith(NOTE_SUFFIX):
            if info.st_size > MAX_NOTE_BYTES or len(entries) >= MAX_NOTES:
                skipped += 1
                continue
            entries.append(Entry(prefix + name, info.st_mtime_ns, info.st_size))
    return skipped


def read_note(root_fd: int, path: str) -> str | None:
    """The note's text (UTF-8, undecodable bytes replaced, newlines normalized); None when it
    is gone, became something other than a plain file, or grew past ``MAX_NOTE_BYTES``."""
    *folders, name = path.split("/")
    fd = os.dup(root_fd)
    try:
        for folder in folders:
            try:
                child = os.open(folder, DIR_FLAGS, dir_fd=fd)
            except OSError:
                return None
            os.close(fd)
            fd = child
        try:
            note_fd = open_regular_fd(name, dir_fd=fd, label=path)
        except (OSError, UnsafeFileError):
            return None  # a symlink, FIFO or device is never read
        with os.fdopen(note_fd, "rb") as handle:
            data = handle.read(MAX_NOTE_BYTES + 1)
    finally:
        os.close(fd)
    if len(data) > MAX_NOTE_BYTES:
        return None
    return data.decode("utf-8", errors="replace").replace("\r\n", "\n").replace("\r", "\n")
