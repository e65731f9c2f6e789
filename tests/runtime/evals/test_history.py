"""The eval's results history: appended one line per run, read back skipping what is not a run."""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from specwire.runtime.core.errors import UnsafeFileError
from specwire.runtime.evals.history import (
    MAX_RUNS_READ,
    append_history,
    history_beside,
    history_record,
    read_history,
)
from tests.runtime.evals.eval_data import mode_results

T0 = datetime(2026, 12, 1, 8, 0, tzinfo=UTC)


def test_runs_are_appended_and_read_back_oldest_first(tmp_path: Path) -> None:
    path = tmp_path / "report.history.jsonl"
    assert read_history(path) == []
    first = history_record(mode_results(reasked=2), T0)
    second = history_record(mode_results(), T0 + timedelta(days=1))
    append_history(path, first)
    append_history(path, second)
    assert read_history(path) == [first, second]
    assert first["at"] == "2026-12-01T08:00:00.000Z"
    assert first["recallMs"] == [0.4, 0.6, 2.5]
    assert [r["memory"] for r in first["results"]] == ["on", "off"]
    assert os.stat(path).st_mode & 0o777 == 0o600
    assert history_beside(tmp_path / "report.html") == path


def test_a_torn_or_foreign_line_is_skipped_not_fatal(tmp_path: Path) -> None:
    path = tmp_path / "h.jsonl"
    good = history_record(mode_results(), T0)
    lines = [
        json.dumps(good),
        '{"version": 1, "at": "2026-12-01", "results": [',  # an append cut short
        json.dumps({**good, "version": 2}),
        json.dumps({**good, "recallMs": [1.0, -2.0]}),
        '{"version": 1, "at": "x", "results": [], "recallMs": [NaN]}',
        "[1, 2]",
        json.dumps(good),
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert read_history(path) == [good, good]


def test_only_the_newest_runs_are_read(tmp_path: Path) -> None:
    path = tmp_path / "h.jsonl"
    lines = [
        json.dumps({"version": 1, "at": f"run {n}", "results": []})
        for n in range(MAX_RUNS_READ + 5)
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    runs = read_history(path)
    assert len(runs) == MAX_RUNS_READ and runs[0]["at"] == "run 5"


def test_a_symlink_in_the_history_s_place_is_refused(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere.txt"
    target.write_text("keep\n", encoding="utf-8")
    link = tmp_path / "h.jsonl"
    link.symlink_to(target)
    with pytest.raises(UnsafeFileError):
        append_history(link, history_record(mode_results(), T0))
    with pytest.raises(UnsafeFileError):
        read_history(link)
    assert target.read_text(encoding="utf-8") == "keep\n"


def test_an_append_after_a_torn_line_starts_a_line_of_its_own(tmp_path: Path) -> None:
    path = tmp_path / "h.jsonl"
    good = history_record(mode_results(), T0)
    append_history(path, good)
    with path.open("a", encoding="utf-8") as handle:
        handle.write('{"version": 1, "at": "2026-12-0')  # a run killed mid-append
    append_history(path, good)
    assert read_history(path) == [good, good]
