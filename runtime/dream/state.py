"""The dream state of one spec: ``<root>/state/<spec>/dream/state.json``, and the run lock.

Shape::

    {"version": 1, "spec": "…", "windowKey": "dream:<spec>:<n>", "windowStart": "…",
     "everyS": 86400, "lastRunAt": "…", "status": "ok|partial",
     "lastOutcome": {…DreamOutcome…}, "phase1Counts": {"facts.swept": 0, …},
     "stale": {"facts": ["mem_…"], "articles": ["slug"]},
     "modelLedger": {"runs": 2, "calls": 5, "inputTokens": …, "outputTokens": …,
                     "cachedTokens": …, "unmeteredCalls": 0, "spentUsd": 0.05, "since": "…"}}

``modelPhaseWindow`` is the window whose model phase has started: written before the session
runs (so a process killed in it leaves the mark) and kept by the run's record, it keeps a
window to one model phase, however often the window's run is retried (a ``partial`` run, a
host restarted mid-run); ``--force`` runs one again. ``modelLedger`` is the spend of every
model phase recorded here, carried from run to run (per
tenant on managed: the state lives under the tenant's root); absent until a model phase ran.

Window ``n`` is ``floor(epoch seconds / every)``: a run whose window already holds a completed
(``ok``) run does nothing. Written atomically (temporary file and rename, 0600) below the root,
never through a link; runs of one spec are serialized by ``dream/.lock``. With
``memory.state: postgres`` the same file is a document of the database volume
(``runtime.pg.volume``) and the lock its advisory lock: hosts on any machine share the window.
"""

from __future__ import annotations

import json
import os
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from specwire.runtime.core.clock import Clock, iso
from specwire.runtime.core.errors import StoreError
from specwire.runtime.core.paths import StoreLayout
from specwire.runtime.core.volume import DocumentVolume
from specwire.runtime.fs.fenced import read_text, write_atomic
from specwire.runtime.fs.locking import FileLock
from specwire.runtime.fs.safe_open import open_dir_beneath

STATE_VERSION = 1
DREAM_DIR = "dream"
STATE_FILE = "state.json"
LOCK_FILE = ".lock"
LOCK_WAIT_S = 2.0
# The key of the window whose model phase has started (see the module's docstring).
MODEL_WINDOW = "modelPhaseWindow"


@dataclass(frozen=True)
class Window:
    key: str
    index: int
    start: datetime


def window_of(spec: str, now: datetime, every_s: int) -> Window:
    index = int(now.timestamp()) // every_s
    return Window(f"dream:{spec}:{index}", index, datetime.fromtimestamp(index * every_s, UTC))


def dream_dir(layout: StoreLayout) -> Path:
    return layout.state_dir / DREAM_DIR


def state_path(layout: StoreLayout) -> Path:
    return dream_dir(layout) / STATE_FILE


def make_dream_dir(layout: StoreLayout) -> None:
    """Create ``state/<spec>/dream`` (0700) below the root, never through a symlink."""
    parts = dream_dir(layout).relative_to(layout.root.resolve()).parts
    fd = open_dir_beneath(layout.root, parts, create=True, mode=0o700)
    if fd is not None:
        os.close(fd)


def run_lock(
    layout: StoreLayout, now: Clock, volume: DocumentVolume | None = None
) -> AbstractContextManager[Any]:
    lock = dream_dir(layout) / LOCK_FILE
    if volume is not None:
        return volume.locked(lock, wait_s=LOCK_WAIT_S, what="dream run", now=now)
    return FileLock(lock, wait_s=LOCK_WAIT_S, what="dream run", now=now)


def read_state(layout: StoreLayout, volume: DocumentVolume | None = None) -> dict[str, Any] | None:
    """The last run's record, or None when no run was recorded; a damaged file is an error."""
    if volume is not None:
        text = volume.read(state_path(layout))
    else:
        text = read_text(state_path(layout), root=layout.root)
    if text is None:
        return None
    try:
        data = json.loads(text)
    except ValueError:
        raise StoreError(
            f"{state_path(layout)} is not valid JSON: fix or move it away (it only records "
            "the last dream run)"
        ) from None
    if not isinstance(data, dict):
        raise StoreError(f"{state_path(layout)} must hold a JSON object")
    return data


def completed_in(state: dict[str, Any] | None, window: Window) -> bool:
    if state is None:
        return False
    return state.get("windowKey") == window.key and state.get("status") == "ok"


def write_state(
    layout: StoreLayout, record: dict[str, Any], volume: DocumentVolume | None = None
) -> Path:
    path = state_path(layout)
    text = json.dumps({"version": STATE_VERSION, **record}, ensure_ascii=False, indent=2) + "\n"
    if volume is not None:
        volume.write(path, text)
        return path
    return write_atomic(path, text, root=layout.root)


_LEDGER_COUNTS = (
    ("calls", "calls"),
    ("inputTokens", "input_tokens"),
    ("outputTokens", "output_tokens"),
    ("cachedTokens", "cached_tokens"),
    ("unmeteredCalls", "unmetered_calls"),
)


def model_ledger(
    previous: dict[str, Any] | None, model: dict[str, Any], ran_at: datetime
) -> dict[str, Any] | None:
    """The previous record's ``modelLedger`` plus this run's model phase (``ModelPhase`` as
    data) when it ran; None when no model phase ever ran. A damaged ledger restarts from this
    run (it is a tally, never a limit)."""
    before = previous.get("modelLedger") if previous is not None else None
    keys = ("runs", *(key for key, _ in _LEDGER_COUNTS))
    if not isinstance(before, dict) or not all(
        isinstance(before.get(key), int) and not isinstance(before.get(key), bool) for key in keys
    ):
        before = None
    if not model.get("ran"):
        return before
    ledger: dict[str, Any] = {"runs": (before["runs"] if before else 0) + 1}
    for key, field in _LEDGER_COUNTS:
        value = model.get(field)
        ledger[key] = (before[key] if before else 0) + (value if isinstance(value, int) else 0)
    spent = model.get("spent_usd")
    spent_before = before.get("spentUsd") if before else 0.0
    ledger["spentUsd"] = round(
        (spent_before if isinstance(spent_before, int | float) else 0.0)
        + (spent if isinstance(spent, int | float) else 0.0),
        6,
    )
    since = before.get("since") if before else None
    ledger["since"] = since if isinstance(since, str) else iso(ran_at)
    return ledger


def state_record(
    *,
    spec: str,
    window: Window,
    every_s: int,
    ran_at: datetime,
    outcome: dict[str, Any],
    phase1_counts: dict[str, int],
    stale_facts: tuple[str, ...],
    stale_articles: tuple[str, ...],
    ledger: dict[str, Any] | None = None,
    model_window: str | None = None,
) -> dict[str, Any]:
    extra: dict[str, Any] = {"modelLedger": ledger} if ledger is not None else {}
    if model_window is not None:
        extra[MODEL_WINDOW] = model_window
    return {
        "spec": spec,
        "windowKey": window.key,
        "windowStart": iso(window.start),
        "everyS": every_s,
        "lastRunAt": iso(ran_at),
        "status": outcome["status"],
        "lastOutcome": outcome,
        "phase1Counts": phase1_counts,
        "stale": {"facts": list(stale_facts), "articles": list(stale_articles)},
        **extra,
    }
