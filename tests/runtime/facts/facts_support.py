"""Helpers shared by the facts tests (imported by name; the test dir is on sys.path)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

START = datetime(2026, 7, 1, 12, 0, tzinfo=UTC)
DAY_MS = 86_400_000


class FakeClock:
    """A clock tests move by hand; never the wall clock."""

    def __init__(self, start: datetime = START) -> None:
        self.moment = start

    def __call__(self) -> datetime:
        return self.moment

    def advance(self, **delta: float) -> None:
        self.moment += timedelta(**delta)
