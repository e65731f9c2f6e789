"""Managed continuity per person with ``memory.state: postgres`` (issue 21, H7-1): the
managed-postgres bundle served in-process on a real server keeps each person's focus in its own
document folder of the tenant's spec (``state/<spec>/sessions/user-<sha256>/``), an anonymous
session's in its own, and nothing in the tenant-wide folder every user would read; erasing the
person deletes that folder's documents whole."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "serve"))
from inprocess_serving import ask_as, example_agent, serve_app, stores_kept_open  # noqa: E402
from starlette.testclient import TestClient  # noqa: E402
from state_support import PostgresServerForTests, database_documents, volume_on  # noqa: E402

from specwire.runtime.core.paths import audience_folder  # noqa: E402
from specwire.runtime.core.scopes import ScopeKey  # noqa: E402
from specwire.runtime.erasure.state_tier import erase_state_documents  # noqa: E402
from specwire.runtime.erasure.subject import Subject  # noqa: E402
from specwire.runtime.facts.providers.connect import close_shared_pools  # noqa: E402
from specwire.runtime.pg.pool import open_pool  # noqa: E402

pytestmark = pytest.mark.postgres

KEY = "sk-acme-0123456789abcdef0123"
MODEL = "managed-postgres"
STATE = f"state/{MODEL}"


@pytest.fixture(scope="module")
def agent() -> ModuleType:
    return example_agent(MODEL)


@pytest.fixture
def database(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    uri = PostgresServerForTests.fresh_database()
    monkeypatch.setenv("DATABASE_URL", uri)
    yield uri
    close_shared_pools()
    PostgresServerForTests.drop_database(uri)


def say(http: TestClient, user: str | None, session: str, text: str) -> str:
    return ask_as(http, KEY, MODEL, user, session, text)


def test_each_person_and_each_anonymous_session_has_its_own_folder_in_the_database(
    agent: ModuleType,
    database: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("SPECWIRE_TENANT_KEY_TENANT_ACME", KEY)
    work = tmp_path / "work"
    app, _ = serve_app(agent, work, monkeypatch, "managed")
    ana = "ana:42@example.com"  # never used as a name: hashed
    with stores_kept_open(), TestClient(app) as http:
        assert "focus updated" in say(http, ana, "s1", "focus: ana's sick-leave paperwork")
        assert "sick-leave" in say(http, ana, "s2", "call FocusRead {}")  # her next session
        assert "sick-leave" not in say(http, "bob", "s1", "call FocusRead {}")
        assert "focus updated" in say(http, None, "kiosk-1", "focus: the refund queue")
        assert "refund" not in say(http, None, "kiosk-2", "call FocusRead {}")

    tenant_root = (work / ".specwire" / "tenants" / "tenant-acme").resolve()
    pool: Any = open_pool(database, max_size=2)
    try:
        documents = database_documents(
            volume_on(pool, tenant_root, tenant="tenant-acme", spec=MODEL)
        )
    finally:
        pool.close()
    hers = f"{STATE}/sessions/{audience_folder(ScopeKey('user', ana))}/focus.md"
    kiosk = f"{STATE}/sessions/{audience_folder(ScopeKey('conversation', 'kiosk-1'))}/focus.md"
    assert b"sick-leave" in documents[hers] and b"refund" in documents[kiosk]
    assert f"{STATE}/focus.md" not in documents  # the tenant-wide folder: nobody's
    focuses = sorted(path for path in documents if path.endswith("/focus.md"))
    assert focuses == sorted([hers, kiosk])
    assert not (tenant_root / "state").exists()  # nothing on disk

    key = ScopeKey("user", ana)
    erased = erase_state_documents(database, Subject.identifier(ana, key.label()), key)
    assert erased.dropped >= 1 and erased.remaining == 0
    pool = open_pool(database, max_size=2)
    try:
        after = database_documents(volume_on(pool, tenant_root, tenant="tenant-acme", spec=MODEL))
    finally:
        pool.close()
    assert not [path for path in after if audience_folder(key) in path]
    assert b"refund" in after[kiosk]  # another audience's: untouched
