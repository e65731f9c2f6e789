"""Fixtures for the facts tier: an injectable clock and a real SQLite store in a tmp dir."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from facts_support import FakeClock

from specwire.runtime.facts.store import FactStore


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "specwire" / "facts" / "spec.sqlite3"


@pytest.fixture
def store(db_path: Path, clock: FakeClock) -> Iterator[FactStore]:
    with FactStore.open(db_path, now=clock) as opened:
        yield opened
