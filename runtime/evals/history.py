"""The eval's results history: one JSON line per ``codegen eval`` run, appended, never rewritten.

``codegen eval --html FILE`` appends to ``<FILE's stem>.history.jsonl`` beside the report (or to
``--history PATH``), then plots the scores over the runs it holds. A line::

    {"version": 1, "at": "2026-12-02T07:10:00.000Z", "results": [...], "totals": [...],
     "recallMs": [0.412, ...]}

``results`` and ``totals`` are exactly what ``--json`` prints; ``recallMs`` is how long each
auto-recall of the run took. Reading skips a line that is not such an object (a torn last line
of an interrupted append, a hand edit), so one bad line never hides the others.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from specwire.runtime.core.clock import iso
from specwire.runtime.evals.report import result_data, totals
from specwire.runtime.evals.runner import ModeResult
from specwire.runtime.fs.safe_open import open_regular_fd, read_regular_text

HISTORY_VERSION = 1
HISTORY_SUFFIX = ".history.jsonl"
# Plots read the newest runs only: a years-old history must not make a report slow.
MAX_RUNS_READ = 500


def history_beside(report: Path) -> Path:
    """``report.html`` → ``report.history.jsonl`` in the same folder."""
    return report.with_name(report.stem + HISTORY_SUFFIX)


def history_record(results: Sequence[ModeResult], at: datetime) -> dict[str, Any]:
    return {
        "version": HISTORY_VERSION,
        "at": iso(at),
        "results": [result_data(result) for result in results],
        "totals": [result_data(result) for result in totals(results)],
        "recallMs": [ms for result in results for ms in result.recall_ms],
    }


def append_history(path: Path, record: dict[str, Any]) -> None:
    """Append ``record`` as one line (the file is created 0600 when missing; a symlink, FIFO or
    directory in its place is refused; after a line an interrupted append left unfinished, on a
    line of its own). ``OSError`` when it cannot be written."""
    line = (json.dumps(record, ensure_ascii=False, sort_keys=True) + "\n").encode("utf-8")
    fd = open_regular_fd(path, os.O_RDWR | os.O_APPEND | os.O_CREAT)
    try:
        size = os.fstat(fd).st_size
        if size and os.pread(fd, 1, size - 1) != b"\n":
            line = b"\n" + line  # an earlier append was cut short: never glue onto its line
        view = memoryview(line)
        while view:
            view = view[os.write(fd, view) :]
    finally:
        os.close(fd)


def read_history(path: Path) -> list[dict[str, Any]]:
    """The runs recorded at ``path``, oldest first (the newest ``MAX_RUNS_READ``); none when the
    file does not exist."""
    try:
        content = read_regular_text(path)
    except FileNotFoundError:
        return []
    runs: list[dict[str, Any]] = []
    for line in content.splitlines():
        try:
            record = json.loads(line, parse_constant=_no_constant)
        except ValueError:
            continue
        if _is_run(record):
            runs.append(record)
    return runs[-MAX_RUNS_READ:]


def _no_constant(name: str) -> float:
    raise ValueError(f"{name} is not a number here")


def _is_run(record: object) -> bool:
    if not isinstance(record, dict) or record.get("version") != HISTORY_VERSION:
        return False
    results, recall = record.get("results"), record.get("recallMs", [])
    return (
        isinstance(record.get("at"), str)
        and isinstance(results, list)
        and all(isinstance(result, dict) for result in results)
        and isinstance(recall, list)
        and all(_is_ms(value) for value in recall)
    )


def _is_ms(value: object) -> bool:
    return (
        isinstance(value, int | float)
        and not isinstance(value, bool)
        and math.isfinite(value)
        and value >= 0
    )
