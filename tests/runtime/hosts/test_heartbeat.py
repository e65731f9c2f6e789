"""The serving hosts' heartbeat: its interval setting, ticks that never overlap, a failing tick
that does not stop the next, and a stop that ends the thread."""

from __future__ import annotations

import threading

import pytest

from specwire.runtime.core.errors import ServeConfigError
from specwire.runtime.core.fragment_data import FragmentData, read_fragment
from specwire.runtime.hosts.heartbeat import (
    DEFAULT_HEARTBEAT_S,
    Heartbeat,
    heartbeat_interval,
    heartbeat_on,
    start_study_heartbeat,
)


def test_the_interval_setting() -> None:
    assert heartbeat_interval({}) == DEFAULT_HEARTBEAT_S
    assert heartbeat_interval({"SPECWIRE_HEARTBEAT_S": " 90 "}) == 90.0
    for bad in ("0", "-5", "soon", "nan", "inf"):
        with pytest.raises(ServeConfigError, match="SPECWIRE_HEARTBEAT_S"):
            heartbeat_interval({"SPECWIRE_HEARTBEAT_S": bad})


def test_ticks_run_one_at_a_time_and_a_failure_does_not_stop_the_next() -> None:
    running = 0
    overlaps = 0
    ticks = 0
    enough = threading.Event()
    lock = threading.Lock()
    lines: list[str] = []

    def tick() -> None:
        nonlocal running, overlaps, ticks
        with lock:
            running += 1
            overlaps += running > 1
            ticks += 1
            count = ticks
        try:
            if count == 1:
                raise RuntimeError("a source is gone")
            if count >= 4:
                enough.set()
        finally:
            with lock:
                running -= 1

    beat = Heartbeat(0.001, tick, lines.append).start()
    assert enough.wait(30)
    assert beat.stop(30)
    assert overlaps == 0
    assert lines[0] == "[heartbeat] tick failed (RuntimeError: a source is gone)\n"


def test_stop_before_the_first_tick_never_ticks() -> None:
    called: list[int] = []
    beat = Heartbeat(3600, lambda: called.append(1), lambda line: None).start()
    assert beat.stop(30) and called == []


def _fragment(study: dict[str, object] | None) -> FragmentData:
    learning: dict[str, object] = {"domain": "d", "sources": ["a.md"]}
    if study is not None:
        learning.update(study)
    return read_fragment(
        {"spec_name": "s", "memory": {"wiki": {"require_sources": True}}, "learning": learning}
    )


def test_only_a_spec_that_asks_gets_a_heartbeat() -> None:
    asked = _fragment({"study_on_heartbeat": True})
    assert heartbeat_on(asked)
    assert not heartbeat_on(_fragment(None))
    assert not heartbeat_on(None)
    lines: list[str] = []
    quiet = start_study_heartbeat(_fragment(None), lambda: [], lines.append)
    assert quiet is None and lines == []
    beat = start_study_heartbeat(asked, lambda: [], lines.append, interval_s=3600)
    assert beat is not None and beat.stop(30)
    assert lines == ["[heartbeat] s: a study pass every 3600 s (SPECWIRE_HEARTBEAT_S)\n"]
