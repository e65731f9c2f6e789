"""core.progress: a stderr line on a terminal, after a delay, erased at the end; none on pipes."""

from __future__ import annotations

import io

from specwire.runtime.core.progress import Progress


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


class _Clock:
    def __init__(self, step: float = 0.0) -> None:
        self.now = 100.0
        self.step = step

    def __call__(self) -> float:
        self.now += self.step
        return self.now


def test_a_pipe_sees_nothing_and_track_returns_the_items_unchanged() -> None:
    piped = io.StringIO()
    items = [1, 2, 3]
    with Progress("importing", 3, stream=piped, delay=0) as progress:
        assert progress.track(items) is items
        progress.advance(3)
        progress.phase("indexes")
    assert piped.getvalue() == ""


def test_a_terminal_sees_the_line_after_the_delay_and_it_is_erased_at_the_end() -> None:
    tty, clock = _Tty(), _Clock()
    with Progress("importing facts", 2_000, stream=tty, delay=0.5, clock=clock) as progress:
        progress.advance(10)
        assert tty.getvalue() == ""  # fast work shows nothing
        clock.now += 1
        progress.advance(990, note="(a.jsonl)")
        assert tty.getvalue().endswith("importing facts: 1,000/2,000 (50%) (a.jsonl)")
        drawn = tty.getvalue()
        progress.advance(1)  # within the redraw interval: not drawn again
        assert tty.getvalue() == drawn
    assert tty.getvalue().endswith("\r\x1b[K")


def test_track_counts_what_is_consumed() -> None:
    tty, clock = _Tty(), _Clock(step=1.0)
    progress = Progress("indexing facts", None, stream=tty, delay=0, clock=clock)
    assert sum(progress.track(range(2_000))) == sum(range(2_000))
    assert progress.done == 2_000
    assert tty.getvalue().count("indexing facts: ") == 2_000 // 512
    assert tty.getvalue().endswith("indexing facts: 1,536")
    progress.close()
    progress.close()
    assert tty.getvalue().endswith("\r\x1b[K") and tty.getvalue().count("\r\x1b[K") > 1


def test_a_terminal_that_goes_away_stops_the_display_not_the_work() -> None:
    class _Gone(_Tty):
        def write(self, text: str) -> int:
            raise OSError("EIO")

    progress = Progress("erasing", 3, stream=_Gone(), delay=0)
    progress.advance(1)
    assert progress.enabled is False
    progress.advance(2)
    assert progress.done == 3


def test_ticking_redraws_with_the_seconds_elapsed_and_a_log_line_goes_above() -> None:
    tty, clock = _Tty(), _Clock()
    # The timer never fires here (an hour): the test draws by hand, with a clock it sets.
    progress = Progress("dreaming", stream=tty, delay=0, tick=3600, clock=clock)
    with progress, progress.ticking():
        clock.now += 3
        progress.advance(0)
        assert tty.getvalue().endswith("dreaming… 3 s")
        progress.above(lambda: tty.write("[dream] swept 2 fact(s)\n"))
        assert tty.getvalue().endswith("dreaming… 3 s\r\x1b[K[dream] swept 2 fact(s)\n")
    assert tty.getvalue().endswith("\n")  # nothing drawn since: nothing to erase
