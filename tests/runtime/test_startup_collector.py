"""``collector_paused``: the collector is off inside the block, back on after it (frozen what
was alive), and a block inside another or under a caller that turned it off leaves it alone."""

from __future__ import annotations

import gc

import pytest

from specwire.runtime.core.startup import collector_paused


@pytest.fixture(autouse=True)
def _restore_collector() -> object:
    was = gc.isenabled()
    yield None
    gc.unfreeze()
    if was:
        gc.enable()
    else:
        gc.disable()


def test_off_inside_on_after_with_the_start_frozen() -> None:
    gc.enable()
    gc.unfreeze()
    with collector_paused():
        assert not gc.isenabled()
        with collector_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # the inner block did not turn it back on
        kept = [[] for _ in range(100)]
    assert gc.isenabled()
    assert gc.get_freeze_count() >= len(kept)


def test_on_again_after_an_error() -> None:
    gc.enable()
    with pytest.raises(RuntimeError), collector_paused():
        raise RuntimeError("start failed")
    assert gc.isenabled()


def test_a_caller_that_turned_it_off_keeps_it_off() -> None:
    gc.disable()
    gc.unfreeze()
    with collector_paused():
        assert not gc.isenabled()
    assert not gc.isenabled()
    assert gc.get_freeze_count() == 0
