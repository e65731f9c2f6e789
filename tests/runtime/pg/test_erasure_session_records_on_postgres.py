"""Erasing a person in the database deletes the session summaries kept in their key
(``memory.sessionRecall`` with ``memory.state: postgres``: ``sessions-index/<spec>/<sess>.json``
rows of ``state_documents``) whole, as the file tier deletes the files: a redaction of the id
alone left what they said and remembered (the record's outcome and key facts) in the table.
Only the named tenant's, only that key's: another tenant's namesake and another person stay."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from state_support import PostgresServerForTests, database_documents, volume_on

from specwire.runtime.core.paths import StoreLayout
from specwire.runtime.core.scopes import ScopeKey
from specwire.runtime.erasure.state_tier import erase_state_documents
from specwire.runtime.erasure.subject import Subject
from specwire.runtime.facts.session_index import SessionIndex, SessionSummary
from specwire.runtime.pg.pool import open_pool

pytestmark = pytest.mark.postgres

SPEC = "concierge"
ANA = ScopeKey("user", "ana_%")  # LIKE wildcards in the id: matched as text, never a pattern
BOB = ScopeKey("user", "bob")


@pytest.fixture
def database() -> Iterator[str]:
    uri = PostgresServerForTests.fresh_database()
    yield uri
    PostgresServerForTests.drop_database(uri)


def _summary(session: str, scope: ScopeKey, fact: str) -> SessionSummary:
    return SessionSummary(
        session_id=session,
        date="2026-12-07",
        ended_at="2026-12-07T10:00:00Z",
        stop_reason="end_turn",
        turns=2,
        outcome="Noted the visa appointment",
        key_facts=(fact,),
        scope=scope,
    )


def _records(pool: Any, root: Path, tenant: str) -> dict[str, Any]:
    documents = database_documents(volume_on(pool, root, tenant=tenant, spec=SPEC))
    return {
        path: json.loads(body)
        for path, body in documents.items()
        if path.startswith("sessions-index/")
    }


def test_a_persons_session_records_go_whole_in_the_named_tenant_only(
    database: str, tmp_path: Path
) -> None:
    pool: Any = open_pool(database, max_size=2)
    try:
        for tenant in ("acme", "globex"):
            root = tmp_path / tenant
            index = SessionIndex(
                StoreLayout(root, SPEC), volume=volume_on(pool, root, tenant=tenant, spec=SPEC)
            )
            index.write(_summary("sess_ana1", ANA, f"{tenant}: her passport expires in May"))
            index.write(_summary("sess_bob1", BOB, f"{tenant}: he prefers window seats"))
        erased = erase_state_documents(
            database, Subject.identifier(ANA.subject or "", ANA.label()), ANA, tenant="acme"
        )
        acme = _records(pool, tmp_path / "acme", "acme")
        globex = _records(pool, tmp_path / "globex", "globex")
    finally:
        pool.close()
    assert erased.remaining == 0 and erased.dropped == 1
    texts = json.dumps(acme)
    assert "passport" not in texts  # her record's words went with it, not just her id
    assert [record["scope"] for record in acme.values()] == ["user:bob"]
    assert "window seats" in texts
    assert sorted(record["scope"] for record in globex.values()) == ["user:ana_%", "user:bob"]
