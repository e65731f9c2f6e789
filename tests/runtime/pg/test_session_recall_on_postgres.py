"""Session recall with ``memory.state: postgres`` on a real server (pgserver): a session's summary
record is a document of the state volume, and a session in another (empty) folder recalls it."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "conformance"))
from conformance_harness import PostgresServerForTests  # noqa: E402

from specwire.runtime.core.ids import new_session_id  # noqa: E402
from specwire.runtime.core.tool_types import ToolCatalog  # noqa: E402
from specwire.runtime.loop import run_chat_loop  # noqa: E402
from specwire.runtime.models import ScriptedModel  # noqa: E402
from specwire.runtime.wiring import MemoryDeps, session_logs_for, wire_memory  # noqa: E402

pytestmark = pytest.mark.postgres

SPEC = "recall-spec"
PORTAL = "the invoice portal moved to portal.acme.example last week"
ASK = "ask about invoice portal: where is the invoice portal now?"


@pytest.fixture
def database() -> Iterator[str]:
    uri = PostgresServerForTests.fresh_database()
    yield uri
    PostgresServerForTests.drop_database(uri)


def session(cwd: Path, database: str, message: str, monkeypatch: Any) -> list[str]:
    monkeypatch.setenv("DATABASE_URL", database)
    fragment = {
        "spec_name": SPEC,
        "version": 6,
        "memory": {
            "backend": "postgres",
            "dsn": "$DATABASE_URL",
            "state": "postgres",
            "session_recall": True,
        },
    }
    catalog = ToolCatalog()
    wired = wire_memory(fragment, MemoryDeps(catalog=catalog, cwd=cwd, log=lambda line: None))
    from specwire.runtime.wiring import parse_fragment

    logs = session_logs_for(parse_fragment(fragment), None, cwd / "unused")
    out: list[str] = []
    try:
        run_chat_loop(
            model=ScriptedModel(),
            instructions="You help with the Acme billing product.",
            catalog=catalog,
            session_log=logs.open(new_session_id()),
            inputs=[message],
            output=out.append,
            log=lambda line: None,
            **wired.options,
        )
    finally:
        wired.close()
    return out


def test_a_session_in_another_folder_recalls_an_earlier_sessions_outcome(
    tmp_path: Path, database: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    session(tmp_path / "one", database, PORTAL, monkeypatch)
    [answer] = session(tmp_path / "two", database, ASK, monkeypatch)
    assert "portal.acme.example" in answer, answer
    for folder in (tmp_path / "one", tmp_path / "two"):
        assert [p for p in folder.rglob("*") if p.is_file()] == []
