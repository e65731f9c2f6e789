"""Fenced file I/O for the continuity store: atomic 0600 writes, tolerant reads.

Every path is checked with ``assert_inside(path, root)`` before it is touched, so a path (or a
symlink) that escapes the store's root fails closed with ``TenancyError``.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

from runtime.tenancy import assert_inside

FILE_MODE = 0o600
DIR_MODE = 0o700


def write_atomic(path: Path, text: str, *, root: Path) -> Path:
    """Write ``text`` to ``path`` through a temporary file and a rename (mode 0600)."""
    target = assert_inside(path, root)
    parent = assert_inside(target.parent, root)
    parent.mkdir(parents=True, exist_ok=True, mode=DIR_MODE)
    # The parent may be a symlink created meanwhile: check again once it exists.
    assert_inside(parent, root)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp_name, FILE_MODE)
        os.replace(tmp_name, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp_name)
        raise
    return target


def read_text(path: Path, *, root: Path) -> str | None:
    """The file's text, or None when it does not exist. Never locks."""
    target = assert_inside(path, root)
    try:
        return target.read_text(encoding="utf-8")
    except (FileNotFoundError, NotADirectoryError):
        return None
