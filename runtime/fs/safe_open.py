"""Opening state files that must be plain files: never hanging, never following a link.

Opening a FIFO for reading blocks until a writer shows up, and a device may block forever, so a
FIFO planted where a state file belongs would hang whoever opens it. Every open here adds
``O_NONBLOCK`` (opening a FIFO then returns at once) and checks ``S_ISREG`` with ``fstat`` on the
descriptor it got: what is checked is what is read, so a file swapped after a ``stat`` cannot
slip through. ``O_NOFOLLOW`` refuses a symlink as the last component unless the caller allows it.

``open_dir_beneath`` walks a directory path below a trusted root one component at a time, each
opened relative to its parent's descriptor with ``O_NOFOLLOW``: state folders never follow a
symlink, so no component can be swapped to lead somewhere else.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import stat
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import BinaryIO

from specwire.runtime.core.errors import UnsafeFileError

_KINDS: tuple[tuple[Callable[[int], bool], str], ...] = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISLNK, "a symbolic link"),
)
DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def kind_of(mode: int) -> str:
    """What a non-regular file is, for messages ("a FIFO (named pipe)")."""
    for test, name in _KINDS:
        if test(mode):
            return name
    return "a special file"


def not_regular(label: str, mode: int) -> UnsafeFileError:
    return UnsafeFileError(label, f"is {kind_of(mode)}, not a regular file; refusing to open it")


def symlink_refused(label: str) -> UnsafeFileError:
    return UnsafeFileError(label, "is a symbolic link; refusing to follow it")


def _describe_failed_open(
    path: str | Path, dir_fd: int | None, label: str, exc: OSError
) -> UnsafeFileError | None:
    """The refusal for an open that failed because of what the path is, or None."""
    if exc.errno == errno.ELOOP:
        return symlink_refused(label)
    if exc.errno in (errno.ENXIO, errno.EOPNOTSUPP):
        # A FIFO opened for writing with no reader, or a socket: say which.
        try:
            mode = os.stat(path, dir_fd=dir_fd, follow_symlinks=False).st_mode
        except OSError:
            return UnsafeFileError(label, "is not a regular file; refusing to open it")
        return not_regular(label, mode)
    return None


def open_regular_fd(
    path: str | Path,
    flags: int = os.O_RDONLY,
    *,
    dir_fd: int | None = None,
    label: str | None = None,
    follow_symlinks: bool = False,
    mode: int = 0o600,
) -> int:
    """Open a regular file without ever blocking; ``UnsafeFileError`` (naming ``label``) for a
    FIFO, device, socket, directory, or, unless ``follow_symlinks``, a symlink. Other errors
    (``FileNotFoundError``…) propagate. The descriptor is returned in blocking mode."""
    shown = label if label is not None else str(path)
    extra = os.O_NONBLOCK | os.O_CLOEXEC | (0 if follow_symlinks else os.O_NOFOLLOW)
    try:
        fd = os.open(path, flags | extra, mode, dir_fd=dir_fd)
    except OSError as exc:
        refusal = _describe_failed_open(path, dir_fd, shown, exc)
        if refusal is not None:
            raise refusal from None
        raise
    try:
        st_mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(st_mode):
            raise not_regular(shown, st_mode)
        fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) & ~os.O_NONBLOCK)
    except BaseException:
        os.close(fd)
        raise
    return fd


def open_regular(path: Path, *, follow_symlinks: bool = False) -> BinaryIO:
    """``open(path, "rb")`` for a file that must be a regular file (see ``open_regular_fd``)."""
    return os.fdopen(open_regular_fd(path, follow_symlinks=follow_symlinks), "rb")


def text_mode(data: bytes) -> str:
    """UTF-8 bytes as ``open(..., encoding="utf-8")`` reads them (universal newlines)."""
    return data.decode("utf-8").replace("\r\n", "\n").replace("\r", "\n")


def read_regular_text(path: Path, *, follow_symlinks: bool = False) -> str:
    with open_regular(path, follow_symlinks=follow_symlinks) as handle:
        return text_mode(handle.read())


def _open_root(root: Path, *, create: bool, mode: int) -> int | None:
    try:
        return os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except (FileNotFoundError, NotADirectoryError):
        if not create:
            return None
    root.mkdir(parents=True, exist_ok=True, mode=mode)
    return os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)


def _open_child_dir(fd: int, part: str, *, create: bool, mode: int, label: str) -> int | None:
    """The directory ``part`` of ``fd`` (opened without following a link), None when missing
    and not ``create``d, or None when it is not a directory and we only read."""
    for _ in range(8):  # the entry may change between two calls: look again, a few times
        try:
            return os.open(part, DIR_FLAGS, dir_fd=fd)
        except FileNotFoundError:
            if not create:
                return None
            with contextlib.suppress(FileExistsError):
                os.mkdir(part, mode, dir_fd=fd)
        except OSError as exc:
            if exc.errno not in (errno.ENOTDIR, errno.ELOOP):
                raise
            try:
                found = os.stat(part, dir_fd=fd, follow_symlinks=False).st_mode
            except FileNotFoundError:
                continue
            if stat.S_ISLNK(found):
                raise symlink_refused(label) from None
            if stat.S_ISDIR(found):
                continue  # replaced by a directory meanwhile: open it again
            if not create:
                return None
            raise
    raise FileNotFoundError(errno.ENOENT, "kept changing while it was being opened", label)


def open_dir_beneath(
    root: Path | int, parts: Sequence[str], *, create: bool = False, mode: int = 0o700
) -> int | None:
    """A descriptor of the directory ``root/parts…``; each part is opened relative to its
    parent with ``O_NOFOLLOW`` (a symlink is refused with ``UnsafeFileError``), and created
    with ``mode`` when ``create``. Without ``create``, None when a part is missing or is not a
    directory. ``root`` (a path, or a directory descriptor that stays the caller's) is trusted
    and opened normally. The caller closes the result."""
    fd = os.dup(root) if isinstance(root, int) else _open_root(root, create=create, mode=mode)
    if fd is None:
        return None
    for index, part in enumerate(parts):
        if part in ("", ".", "..") or "/" in part:
            os.close(fd)
            raise ValueError(f"not a plain path component: {part!r}")
        try:
            child = _open_child_dir(
                fd, part, create=create, mode=mode, label="/".join(parts[: index + 1])
            )
        finally:
            os.close(fd)
        if child is None:
            return None
        fd = child
    return fd
