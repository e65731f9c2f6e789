"""Fenced file I/O for the continuity store: atomic 0600 writes, tolerant reads.

Every path is checked with ``assert_inside(path, root)`` before it is touched, so a path (or a
symlink) that escapes the store's root fails closed with ``TenancyError``.
"""

from __future__ import annotations

from pathlib import Path

from runtime.atomic import replace_atomically
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
    replace_atomically(target, text.encode("utf-8"), mode=FILE_MODE)
    return target


def read_text(path: Path, *, root: Path) -> str | None:
    """The file's text, or None when it does not exist. Never locks."""
    target = assert_inside(path, root)
    try:
        return target.read_text(encoding="utf-8")
    except (FileNotFoundError, NotADirectoryError):
        return None
