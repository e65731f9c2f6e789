"""``retention.json``: session logs pinned because a frozen proof cites them.

Shape ``{"version": 1, "pins": ["sess_…", …], …}``; other keys (and pins in shapes this module
does not know) are preserved. The file is shared by every spec under the root, so updates hold
their own lock, ``.retention.lock`` beside it (``runtime.fs.locking``). Writes are tmp+rename; the
file is capped at 8 MiB. A temporary a killed writer left is removed by the next update (and by
the next store open), under that lock.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from specwire.runtime.core.clock import Clock
from specwire.runtime.core.errors import StoreError
from specwire.runtime.core.tenancy import assert_inside
from specwire.runtime.core.volume import DocumentVolume
from specwire.runtime.fs.atomic import sweep_temps
from specwire.runtime.fs.fenced import read_text, write_atomic
from specwire.runtime.fs.locking import DEFAULT_WAIT_S, FileLock

RETENTION_VERSION = 1
RETENTION_MAX_BYTES = 8 * 1024 * 1024
LOCK_NAME = ".retention.lock"
RETENTION_NAME = "retention.json"


def retention_temp(name: str) -> bool:
    """Whether a leftover temporary's target ``name`` is the retention file."""
    return name == RETENTION_NAME


def _load(path: Path, root: Path) -> dict[str, Any]:
    return _parse(read_text(path, root=root), path)


def _parse(text: str | None, path: Path) -> dict[str, Any]:
    if text is None or not text.strip():
        return {"version": RETENTION_VERSION, "pins": []}
    try:
        raw = json.loads(text)
    except ValueError:
        raise StoreError(
            f"{path.name} is not valid JSON; fix or move it away before proving steps"
        ) from None
    if not isinstance(raw, dict):
        raise StoreError(f"{path.name} must hold a JSON object")
    return raw


def pin_sessions(
    path: Path,
    session_ids: Iterable[str],
    *,
    root: Path,
    now: Clock,
    log: Callable[[str], None],
    wait_s: float = DEFAULT_WAIT_S,
) -> list[str]:
    """Add session ids to ``pins`` (once each); return the ids newly pinned."""
    assert_inside(path, root)
    target = path  # opened as spelled, never through a link (runtime.fs.fenced)
    wanted = list(dict.fromkeys(session_ids))
    if not wanted:
        return []
    lock = FileLock(
        assert_inside(target.with_name(LOCK_NAME), root),
        wait_s=wait_s,
        what=target.name,
        now=now,
    )
    with lock:
        _sweep(target.parent, log)
        data = _load(target, root)
        added, text = _pinned(data, wanted, target)
        if not added:
            return []
        write_atomic(target, text, root=root)
    return added


def pin_sessions_in(
    volume: DocumentVolume, path: Path, session_ids: Iterable[str], *, wait_s: float
) -> list[str]:
    """``pin_sessions`` for a database volume (``retention.json`` kept as a document of the
    tenant's spec)."""
    wanted = list(dict.fromkeys(session_ids))
    if not wanted:
        return []
    with volume.locked(path.with_name(LOCK_NAME), wait_s=wait_s, what=path.name):
        added, text = _pinned(_parse(volume.read(path), path), wanted, path)
        if added:
            volume.write(path, text)
    return added


def _pinned(data: dict[str, Any], wanted: list[str], target: Path) -> tuple[list[str], str]:
    """The ids of ``wanted`` not pinned yet, and the file's text with them added."""
    pins = data.get("pins")
    pins_list: list[Any] = list(pins) if isinstance(pins, list) else []
    added = [sid for sid in wanted if sid not in pins_list]
    if not added:
        return [], ""
    data["pins"] = pins_list + added
    data.setdefault("version", RETENTION_VERSION)
    text = json.dumps(data, ensure_ascii=False, indent=2, sort_keys=True) + "\n"
    if len(text.encode("utf-8")) > RETENTION_MAX_BYTES:
        raise StoreError(
            f"{target.name} would exceed {RETENTION_MAX_BYTES} bytes; nothing was pinned"
        )
    return added, text


def _sweep(directory: Path, log: Callable[[str], None]) -> None:
    """Under the lock: remove temporaries of ``retention.json`` a killed writer left."""
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        removed = sweep_temps(fd, retention_temp)
    finally:
        os.close(fd)
    if removed:
        log(f"[memory] removed temporary file(s) an interrupted write left: {', '.join(removed)}\n")


def read_pins(path: Path, *, root: Path) -> list[str]:
    assert_inside(path, root)
    pins = _load(path, root).get("pins")
    return [p for p in pins if isinstance(p, str)] if isinstance(pins, list) else []
