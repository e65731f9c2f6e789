"""What a conformance case uses besides ``assert``: skipping, expected errors, a hang guard.

Cases are plain functions of a target. They state expectations with ``assert`` (the runner
refuses to start under ``python -O``, which would strip them) and with ``raises``; a case that
needs something the target does not offer calls ``skip`` with the reason. Nothing here imports
pytest: the suite runs with the package alone (``python -m specwire.runtime.facts.conformance``),
and ``tests/conformance`` turns a ``Skipped`` into pytest's skip.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Generic, NoReturn, TypeVar

# How long a stalled backend hangs at most, and how long a case waits for a call that must give
# up at its deadline: guards that keep a broken deadline from hanging the suite, never timing
# assertions (a case checks the order of events instead: the call returned while the stall
# still held).
HANG_GUARD_S = 30.0

Answer = TypeVar("Answer")
Raised = TypeVar("Raised", bound=BaseException)


class Skipped(Exception):
    """The case does not apply to this target; the message says why."""


def skip(reason: str) -> NoReturn:
    raise Skipped(reason)


@dataclass
class RaisedInfo(Generic[Raised]):
    """What ``raises`` caught: ``value``, once the block has raised."""

    caught: Raised | None = None

    @property
    def value(self) -> Raised:
        if self.caught is None:
            raise AssertionError("nothing was raised (yet)")
        return self.caught


@contextmanager
def raises(
    expected: type[Raised] | tuple[type[Raised], ...], *, match: str | None = None
) -> Iterator[RaisedInfo[Raised]]:
    """The block must raise ``expected`` (whose message matches the regex ``match``)."""
    info: RaisedInfo[Raised] = RaisedInfo()
    names = (
        "/".join(e.__name__ for e in expected) if isinstance(expected, tuple) else expected.__name__
    )
    try:
        yield info
    except expected as exc:
        if match is not None and not re.search(match, str(exc)):
            raise AssertionError(
                f"{type(exc).__name__} was raised, but its message {str(exc)!r} does not "
                f"match {match!r}"
            ) from exc
        info.caught = exc
        return
    raise AssertionError(f"expected {names}; nothing was raised")


def answered(call: Callable[[], Answer], guard_s: float = HANG_GUARD_S) -> Answer:
    """``call()``'s result; fails the case if it has not returned within ``guard_s``."""
    pool = ThreadPoolExecutor(max_workers=1)
    try:
        return pool.submit(call).result(timeout=guard_s)
    except FutureTimeout:
        raise AssertionError(f"the call did not return within the {guard_s:g} s guard") from None
    finally:
        pool.shutdown(wait=False)
