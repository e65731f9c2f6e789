"""``FileVolume``: the ``DocumentVolume`` of files under a store root — today's layout.

Reads and writes are ``runtime.fs.fenced`` (every path checked inside the root, opened one
component at a time without following a link, writes atomic with mode 0600); locks are
``FileLock`` (an ``flock`` the OS releases when its holder dies). Nothing is created until the
first write.
"""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Iterator
from contextlib import AbstractContextManager
from pathlib import Path

from specwire.runtime.core.clock import Clock, utc_now
from specwire.runtime.core.errors import TenancyError
from specwire.runtime.core.tenancy import assert_inside
from specwire.runtime.fs.fenced import DIR_MODE, read_text, write_atomic
from specwire.runtime.fs.locking import FileLock


class FileVolume:
    on_files = True

    def __init__(self, root: Path) -> None:
        self.root = root

    @property
    def where(self) -> str:
        return str(self.root)

    def key(self, path: Path) -> str:
        spelled = Path(os.path.normpath(path.absolute()))
        for base in (Path(os.path.normpath(self.root.absolute())), self.root.resolve()):
            if spelled.is_relative_to(base):
                relative = spelled.relative_to(base).as_posix()
                return "" if relative == "." else relative
        raise TenancyError(f"cross-tenant access denied: {spelled} is outside {self.root}")

    def read(self, path: Path) -> str | None:
        return read_text(path, root=self.root)

    def write(self, path: Path, text: str) -> None:
        write_atomic(path, text, root=self.root)

    def names(self, directory: Path) -> list[str]:
        if not directory.is_dir():
            return []
        return sorted(entry.name for entry in directory.iterdir())

    def is_dir(self, path: Path) -> bool:
        return path.is_dir()

    def exists(self, path: Path) -> bool:
        return path.exists()

    def documents(self, directory: Path) -> list[Path]:
        found: list[Path] = []
        directory = assert_inside(directory, self.root)
        if not directory.is_dir():
            return found
        for current, dirs, files in os.walk(directory):
            dirs.sort()
            found += [Path(current) / name for name in files]
        return sorted(found)

    def move(self, source: Path, destination: Path) -> None:
        source = assert_inside(source, self.root)
        destination = assert_inside(destination, self.root)
        destination.parent.mkdir(parents=True, exist_ok=True, mode=DIR_MODE)
        os.rename(source, destination)

    def remove(self, path: Path) -> bool:
        if not (path.exists() or path.is_symlink()):
            return False
        assert_inside(path, self.root)
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)  # never follows the links inside
        else:
            path.unlink()
        return True

    def locked(
        self, lock: Path, *, wait_s: float, what: str, now: Clock | None = None
    ) -> AbstractContextManager[None]:
        return _held(FileLock(lock, wait_s=wait_s, what=what, now=now or utc_now))


@contextlib.contextmanager
def _held(lock: FileLock) -> Iterator[None]:
    with lock:
        yield
