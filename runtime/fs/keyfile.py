"""A random key kept in a file beside what it protects: created once, race-free, mode 0600.

The key is written to a staging file opened with ``O_CREAT|O_EXCL|O_NOFOLLOW`` (0600), synced,
then hard-linked to its name: the link fails when the name exists (another process created the
key first, or something was planted there), so a key is never half-written, never replaced and
never written through a symlink. It is read with ``O_NOFOLLOW`` as a regular file only.
"""

from __future__ import annotations

import os
from pathlib import Path

from specwire.runtime.core.ids import random_hex
from specwire.runtime.fs.safe_open import open_regular_fd

KEY_BYTES = 32


def read_key(path: Path) -> bytes | None:
    """The key in ``path`` (hex, one line), or None when missing or not a key."""
    try:
        fd = open_regular_fd(path)
    except (FileNotFoundError, NotADirectoryError):
        return None
    try:
        data = os.read(fd, 4 * KEY_BYTES)
    finally:
        os.close(fd)
    try:
        key = bytes.fromhex(data.decode("ascii").strip())
    except (UnicodeDecodeError, ValueError):
        return None
    return key if len(key) == KEY_BYTES else None


def key_in(path: Path, *, create: bool = False) -> bytes | None:
    """The key at ``path``; created (its folder too, 0700) on first use when ``create``."""
    key = read_key(path)
    if key is not None or not create:
        return key
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    staging = path.with_name(f"{path.name}.{random_hex(8)}.tmp")
    fd = os.open(staging, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    try:
        os.write(fd, random_hex(KEY_BYTES).encode("ascii") + b"\n")
        os.fsync(fd)
    finally:
        os.close(fd)
    try:
        os.link(staging, path)  # fails if another process created the key first: use theirs
    except FileExistsError:
        pass
    finally:
        staging.unlink()
    key = read_key(path)
    if key is None:
        raise OSError(f"the key file is unreadable or damaged: {path}")
    return key
