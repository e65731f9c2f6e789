"""Atomic file replacement: a temporary file beside the target, fsync, then rename.

A reader sees the old bytes or the new ones, never a mix; a failed write leaves the old file.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path


def replace_atomically(target: Path, data: bytes, *, mode: int | None = None) -> None:
    """Write ``data`` to ``target`` (whose parent must exist); ``mode`` sets the permissions
    (default: what the process umask gives a new file)."""
    fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        if mode is None:
            umask = os.umask(0)
            os.umask(umask)
            mode = 0o666 & ~umask
        os.chmod(tmp_name, mode)
        os.replace(tmp_name, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp_name)
        raise
