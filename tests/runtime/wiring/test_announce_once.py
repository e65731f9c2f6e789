"""Wiring announcements on stderr: once per process, remembered within a bound."""

from __future__ import annotations

from collections import OrderedDict

import specwire.runtime.wiring as wiring


def test_a_line_is_announced_again_only_after_it_fell_out_of_the_bound() -> None:
    remembered: OrderedDict[str, None] = OrderedDict()
    seen = [
        wiring._first_announcement(line, remembered=remembered, limit=2)
        for line in ("a", "b", "a", "c", "b", "a", "b")
    ]
    # "a" repeated stays remembered; "c" pushes out "b", which then pushes out "a".
    assert seen == [True, True, False, True, True, True, False]
    assert list(remembered) == ["a", "b"]


def test_the_process_bound_is_the_documented_one() -> None:
    assert wiring.ANNOUNCED_MAX == 4096  # docs/architecture.md: "bounded, 4,096"
