"""``run_bundle``: a startup failure is one line and exit 2, anything else propagates; the fact
store's sqlite3 errors count once sqlite3 is loaded (the entry itself does not import it)."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

import pytest

from specwire.runtime.hosts.entry import run_bundle
from specwire.runtime.models.errors import ModelError


def failing(exc: BaseException) -> Callable[[], int]:
    def main() -> int:
        raise exc

    return main


def test_a_damaged_fact_store_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert run_bundle("demo", failing(sqlite3.DatabaseError("file is not a database"))) == 2
    err = capsys.readouterr().err
    assert err.startswith("demo: the fact store cannot be read (file is not a database)")
    assert "Traceback" not in err


@pytest.mark.parametrize(
    ("exc", "shown"),
    [
        (sqlite3.OperationalError("database is locked"), "database is locked"),
        (ModelError("no such model"), "no such model"),
        (PermissionError(13, "Permission denied", "/x/.specwire"), "Permission denied: /x/"),
    ],
)
def test_startup_failures_exit_2(
    exc: BaseException, shown: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run_bundle("demo", failing(exc)) == 2
    assert shown in capsys.readouterr().err


def test_other_errors_and_debug_propagate(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ValueError, match="a bug"):
        run_bundle("demo", failing(ValueError("a bug")))
    monkeypatch.setenv("SPECWIRE_DEBUG", "1")
    with pytest.raises(sqlite3.DatabaseError):
        run_bundle("demo", failing(sqlite3.DatabaseError("damaged")))


def test_interrupted(capsys: pytest.CaptureFixture[str]) -> None:
    assert run_bundle("demo", failing(KeyboardInterrupt())) == 130
    assert "interrupted" in capsys.readouterr().err
