"""``retention.json``: session logs pinned because a frozen proof cites them.

Shape ``{"version": 1, "pins": ["sess_…", …], …}``; other keys (and pins in shapes this module
does not know) are preserved. The file is shared by every spec under the root, so updates hold
their own lock, ``.retention.lock`` beside it. Writes are tmp+rename; the file is capped at 8 MiB.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from runtime.continuity.atomic import read_text, write_atomic
from runtime.continuity.lock import DEFAULT_WAIT_S, FileLock
from runtime.errors import StoreError
from runtime.events import Clock
from runtime.tenancy import assert_inside

RETENTION_VERSION = 1
RETENTION_MAX_BYTES = 8 * 1024 * 1024
LOCK_NAME = ".retention.lock"


def _load(path: Path, root: Path) -> dict[str, Any]:
    text = read_text(path, root=root)
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
    target = assert_inside(path, root)
    wanted = list(dict.fromkeys(session_ids))
    if not wanted:
        return []
    lock = FileLock(
        assert_inside(target.with_name(LOCK_NAME), root), wait_s=wait_s, log=log, now=now
    )
    with lock:
        data = _load(target, root)
        pins = data.get("pins")
        pins_list: list[Any] = list(pins) if isinstance(pins, list) else []
        added = [sid for sid in wanted if sid not in pins_list]
        if not added:
            return []
        data["pins"] = pins_list + added
        data.setdefault("version", RETENTION_VERSION)
        text = json.dumps(data, ensure_ascii=False, indent=2, sort_keys=True) + "\n"
        if len(text.encode("utf-8")) > RETENTION_MAX_BYTES:
            raise StoreError(
                f"{target.name} would exceed {RETENTION_MAX_BYTES} bytes; nothing was pinned"
            )
        write_atomic(target, text, root=root)
    return added


def read_pins(path: Path, *, root: Path) -> list[str]:
    pins = _load(assert_inside(path, root), root).get("pins")
    return [p for p in pins if isinstance(p, str)] if isinstance(pins, list) else []
