"""Helpers for the state-on-PostgreSQL tests: a database per test, a volume per worker, and the
documents a store holds (on files or in the database) as ``{relative path: bytes}``."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "conformance"))
from conformance_harness import PostgresServerForTests  # noqa: E402

from specwire.runtime.pg.volume import PostgresVolume  # noqa: E402

__all__ = ["PostgresServerForTests", "database_documents", "file_documents", "volume_on"]


def volume_on(pool: Any, root: Path, *, tenant: str = "acme", spec: str = "demo") -> PostgresVolume:
    return PostgresVolume(pool, root, tenant=tenant, spec=spec)


def file_documents(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` but lock files, by its path relative to ``root``."""
    found: dict[str, bytes] = {}
    for current, _, files in os.walk(root):
        for name in files:
            if name.endswith(".lock"):
                continue
            path = Path(current) / name
            found[path.relative_to(root).as_posix()] = path.read_bytes()
    return found


def database_documents(volume: PostgresVolume) -> dict[str, bytes]:
    return {key: text.encode("utf-8") for key, text, _ in volume.texts(volume.root)}
