"""Wiring announcements on stderr: once per process, remembered within a bound."""

from __future__ import annotations

from collections import OrderedDict

import pytest

import specwire.runtime.wiring as wiring


def test_a_line_is_announced_again_only_after_it_fell_out_of_the_bound(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(wiring, "_announced", OrderedDict())
    monkeypatch.setattr(wiring, "ANNOUNCED_MAX", 2)
    seen = [wiring._first_announcement(line) for line in ("a", "b", "a", "c", "b", "a", "b")]
    # "a" repeated stays remembered; "c" pushes out "b", which then pushes out "a".
    assert seen == [True, True, False, True, True, True, False]
    assert len(wiring._announced) == 2
