"""Parsed skill and command folders, reused while ``stat`` says nothing in them changed.

Per-turn hosts wire skills and commands on every turn; reading and parsing an unchanged folder
each time is wasted work. A folder's signature is the ``stat`` of the folder and of every entry
in it (and of the file inside each entry, for skills: ``<name>/SKILL.md``), following symlinks
as the loader does: mode, device, inode, size, mtime and ctime. A file added, removed, edited,
replaced, retargeted or chmod-ed changes it, so the next turn reads the folder again.

A file changed within ``racy_ns`` of the read (a ``FolderCache`` parameter, ``RACY_NS`` unless
given) may share its timestamps with the next edit (file systems stamp with a coarse clock), so
such a read is not reused. The warnings a read produced
(a skipped file) are replayed with every reuse, as every read would write them. A folder that is
not a ``Path`` (package data inside a zip) cannot change while the process runs and is read once.
"""

from __future__ import annotations

import os
import stat
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Generic, TypeVar

if TYPE_CHECKING:
    from importlib.resources.abc import Traversable

_T = TypeVar("_T")

Warn = Callable[[str], None]
# (mode, device, inode, size, mtime_ns, ctime_ns), or why ``stat`` failed.
FileSignature = tuple[int, int, int, int, int, int] | str
Signature = tuple[tuple[str, FileSignature], ...]

RACY_NS = 2_000_000_000
MAX_FOLDERS = 256
_UNCHANGING: Signature = (("", "package data"),)


@dataclass(frozen=True)
class _Read(Generic[_T]):
    """One folder's parse, valid while its signature holds."""

    signature: Signature
    items: tuple[_T, ...]
    warnings: tuple[str, ...]


class FolderCache(Generic[_T]):
    """What ``parse`` made of a folder, keyed by the folder, valid while its signature holds."""

    def __init__(
        self,
        inner_file: str | None = None,
        max_folders: int = MAX_FOLDERS,
        racy_ns: int = RACY_NS,
    ) -> None:
        self._inner_file = inner_file
        self._max_folders = max_folders
        self._racy_ns = racy_ns
        self._lock = threading.Lock()
        self._reads: dict[str, _Read[_T]] = {}

    def read(
        self, folder: Traversable, parse: Callable[[Traversable, Warn], Iterable[_T]], warn: Warn
    ) -> tuple[_T, ...]:
        key = str(folder)
        signature = self._signature(folder)
        with self._lock:
            cached = self._reads.get(key)
        if cached is not None and signature is not None and cached.signature == signature:
            for line in cached.warnings:
                warn(line)
            return cached.items
        warnings: list[str] = []

        def record(line: str) -> None:
            warnings.append(line)
            warn(line)

        items = tuple(parse(folder, record))
        if signature is not None and not _racy(signature, self._racy_ns):
            self._store(key, _Read(signature, items, tuple(warnings)))
        return items

    def _store(self, key: str, read: _Read[_T]) -> None:
        with self._lock:
            self._reads.pop(key, None)
            while len(self._reads) >= self._max_folders:
                del self._reads[next(iter(self._reads))]
            self._reads[key] = read

    def _signature(self, folder: Traversable) -> Signature | None:
        """None when the folder cannot be listed now (it is read, and nothing is kept)."""
        if not isinstance(folder, Path):
            return _UNCHANGING
        where = str(folder)  # plain strings: this runs on every turn
        top = _file_signature(where)
        if isinstance(top, str) or not stat.S_ISDIR(top[0]):
            return (("", top),)
        try:
            names = sorted(os.listdir(where))
        except OSError:
            return None
        parts: list[tuple[str, FileSignature]] = [("", top)]
        for name in names:
            parts.append((name, _file_signature(f"{where}/{name}")))
            if self._inner_file is not None:
                inner = f"{name}/{self._inner_file}"
                parts.append((inner, _file_signature(f"{where}/{inner}")))
        return tuple(parts)


def _file_signature(path: str) -> FileSignature:
    try:
        info = os.stat(path)
    except OSError as exc:
        return type(exc).__name__
    return (
        info.st_mode,
        info.st_dev,
        info.st_ino,
        info.st_size,
        info.st_mtime_ns,
        info.st_ctime_ns,
    )


def _racy(signature: Signature, racy_ns: int) -> bool:
    recent = time.time_ns() - racy_ns
    return any(
        not isinstance(part, str) and max(part[4], part[5]) >= recent for _, part in signature
    )
