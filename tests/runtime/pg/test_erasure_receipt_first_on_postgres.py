"""A database-only erasure (``erase --postgres VAR`` with no state root here) makes its
receipt's key before it touches the database: a receipt folder that cannot be made (``--root``
mistyped onto a file) is one line, exit 2, and every row still there. It erased the rows first
and then failed, leaving no receipt of an erasure that had happened."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from state_support import PostgresServerForTests

from specwire.runtime.facts.providers.connect import close_shared_pools
from specwire.runtime.facts.providers.postgres.provider import FactScope, PostgresFactProvider
from specwire.runtime.facts.providers.protocol import RetainRequest
from specwire.runtime.owner.command import main

pytestmark = pytest.mark.postgres


@pytest.fixture
def database(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    uri = PostgresServerForTests.fresh_database()
    monkeypatch.setenv("DATABASE_URL", uri)
    yield uri
    close_shared_pools()
    PostgresServerForTests.drop_database(uri)


def _count(database: str) -> int:
    import psycopg

    with psycopg.connect(database) as conn:
        row = conn.execute("SELECT count(*) FROM facts").fetchone()
    return int(row[0]) if row else 0


def test_no_receipt_folder_no_erasure(
    database: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    provider = PostgresFactProvider(database, scope=FactScope("acme", "concierge"))
    try:
        provider.retain(RetainRequest("ana takes her tea green"))
    finally:
        provider.close()
    mistyped = tmp_path / "owner.txt"
    mistyped.write_text("not a folder\n")
    argv = ["--root", str(mistyped), "--tenant", "acme", "--yes", "erase"]
    status = main([*argv, "--subject", "tea green", "--postgres", "DATABASE_URL"])
    err = capsys.readouterr().err
    assert status == 2, err
    assert "Traceback" not in err and "erasures" in err.splitlines()[-1]
    assert _count(database) == 1  # nothing erased without a receipt to show for it
    assert mistyped.read_text() == "not a folder\n"


def test_a_subject_naming_a_database_spec_is_refused_beside_a_state_root(
    database: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """With a state root here and ``--postgres``, the database's tenant and spec names are
    structure too, as they are for a database-only erasure: ``--subject helpdesk`` (another
    spec's name, in every one of its state documents' paths and bodies) is refused."""
    provider = PostgresFactProvider(database, scope=FactScope("acme", "helpdesk"))
    try:
        provider.retain(RetainRequest("the helpdesk opens at nine"))
    finally:
        provider.close()
    (tmp_path / ".specwire" / "state" / "concierge").mkdir(parents=True)
    (tmp_path / ".specwire" / "state" / "concierge" / "focus.md").write_text("# Focus\n")
    argv = ["--root", str(tmp_path), "--yes", "erase", "--subject", "helpdesk"]
    status = main([*argv, "--postgres", "DATABASE_URL"])
    err = capsys.readouterr().err
    assert status == 2 and "the stores' own structure" in err, err
    assert _count(database) == 1
