"""Resolving a path beneath a working directory one component at a time, with no race.

The file tools take paths from a model that may be hostile and may run a shell in the same
directory. Resolving a path, checking it and then using it by name is a race: a directory
swapped for a symlink in between redirects the use outside. ``Workspace.locate`` instead opens
every directory component relative to the descriptor of its parent with ``O_NOFOLLOW`` and
hands back a descriptor of the final component's directory: the directory that was checked is
the one the caller then reads, lists or writes in (``os.open(name, dir_fd=…)``).

Symlinks inside the working directory are followed, safely: a component that is a link is
read with ``readlink`` relative to its directory's descriptor and its target resolved by the
same walk — a relative target from the link's directory, an absolute one only when it names a
path inside the working directory (then from the working directory). ``..`` never climbs above
the working directory. A link leading out, or more than ``MAX_LINKS`` of them, is refused; a
path whose components keep changing under the walk is refused too. The final component is
resolved when it is a link, so the caller gets a name that was not a link when checked; it must
still open it with ``O_NOFOLLOW`` (a link swapped in later fails rather than being followed).
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Callable
from pathlib import Path, PurePosixPath
from types import TracebackType

from specwire.runtime.core.lazy_dataclass import lazy_dataclass
from specwire.runtime.core.tool_types import ToolRefusal
from specwire.runtime.fs.safe_open import DIR_FLAGS

MAX_LINKS = 40
MAX_STEPS = 4096

Guard = Callable[[tuple[str, ...]], None]


class PathRefused(ToolRefusal):
    """A path the workspace will not resolve; the message is shown to the model."""


@lazy_dataclass
class Location:
    """Where a path leads: ``name`` inside the directory ``dir_fd`` (None: the path is that
    directory itself); ``parts`` spells the path from the working directory, links resolved."""

    dir_fd: int
    name: str | None
    parts: tuple[str, ...]

    @property
    def shown(self) -> str:
        return "/".join(self.parts) or "."

    def close(self) -> None:
        fd, self.dir_fd = self.dir_fd, -1
        if fd >= 0:
            os.close(fd)

    def __enter__(self) -> Location:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


class Workspace:
    """A working directory the file tools may not leave. ``root`` must be absolute and
    resolved (it is the one path that is trusted as given)."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def locate(
        self, raw: str, *, create_dirs: bool = False, guard: Guard | None = None
    ) -> Location:
        """Resolve ``raw`` (relative to the root, or absolute inside it). ``create_dirs``
        creates missing directories on the way; ``guard`` sees every path prefix before it is
        opened or created, and may raise ``PathRefused``."""
        if "\x00" in raw:
            raise PathRefused(f"{raw!r}: a path cannot contain a NUL character")
        outside = PathRefused(f"{raw!r} is outside the working directory")
        pending = list(reversed(self._start(raw, outside)))
        fds = [os.open(self.root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)]
        names: list[str] = []
        links = 0
        try:
            for _ in range(MAX_STEPS):
                if not pending:
                    return Location(fds.pop(), None, tuple(names))
                part = pending.pop()
                if part in ("", "."):
                    continue
                if part == "..":
                    if not names:
                        raise outside
                    os.close(fds.pop())
                    names.pop()
                    continue
                if guard is not None:
                    guard((*names, part))
                target = self._link_target(fds[-1], part)
                if target is not None:
                    links += 1
                    if links > MAX_LINKS:
                        raise PathRefused(f"{raw!r}: too many levels of symbolic links")
                    if target.startswith("/"):
                        while len(fds) > 1:
                            os.close(fds.pop())
                        names.clear()
                        pending.extend(reversed(self._start(target, outside)))
                    else:
                        pending.extend(reversed(target.split("/")))
                    continue
                if not any(p not in ("", ".") for p in pending):
                    return Location(fds.pop(), part, (*names, part))
                opened = self._open_dir(fds[-1], part, create_dirs, raw)
                if opened is None:
                    pending.append(part)  # it changed under us (or was just created): again
                    continue
                fds.append(opened)
                names.append(part)
            raise PathRefused(f"{raw!r} kept changing while it was being opened; try again")
        finally:
            for fd in fds:
                os.close(fd)

    def _start(self, raw: str, outside: PathRefused) -> list[str]:
        if not raw.startswith("/"):
            return raw.split("/")
        parts = PurePosixPath(raw).parts[1:]
        root_parts = self.root.parts[1:]
        if tuple(parts[: len(root_parts)]) != root_parts:
            raise outside
        return list(parts[len(root_parts) :])

    @staticmethod
    def _link_target(dir_fd: int, name: str) -> str | None:
        """The target when ``name`` is a symlink right now, else None."""
        try:
            mode = os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode
        except FileNotFoundError:
            return None
        if not stat.S_ISLNK(mode):
            return None
        try:
            return os.readlink(name, dir_fd=dir_fd)
        except OSError as exc:
            if exc.errno in (errno.EINVAL, errno.ENOENT):
                return None  # no longer a link: the caller opens it with O_NOFOLLOW
            raise

    @staticmethod
    def _open_dir(dir_fd: int, name: str, create: bool, raw: str) -> int | None:
        """The directory ``name`` (never through a link); None when it should be looked at
        again (it became a link, or was just created)."""
        try:
            return os.open(name, DIR_FLAGS, dir_fd=dir_fd)
        except FileNotFoundError:
            if not create:
                raise
            with contextlib.suppress(FileExistsError):
                os.mkdir(name, 0o777, dir_fd=dir_fd)
            return None
        except OSError as exc:
            if exc.errno not in (errno.ENOTDIR, errno.ELOOP):
                raise
            try:
                mode = os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode
            except FileNotFoundError:
                return None
            if stat.S_ISLNK(mode) or stat.S_ISDIR(mode):
                return None  # a link now, or a directory again: it changed under us
            raise PathRefused(f"{raw!r}: {name!r} is not a directory") from None
