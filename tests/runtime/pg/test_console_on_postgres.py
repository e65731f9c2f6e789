"""The memory console over a bundle whose state is in PostgreSQL (``--backend postgres``): its
session, continuity, wiki and dream pages read the database (``state_documents``,
``session_log_events``), not the empty folder under the root; in-process, on a real server."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "console"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "continuity"))
from console_client import logged_in  # noqa: E402
from continuity_support import Clock  # noqa: E402
from state_support import PostgresServerForTests, volume_on  # noqa: E402

from specwire.runtime.console.data import BackendOptions, ConsoleData  # noqa: E402
from specwire.runtime.continuity.store import ContinuityStore  # noqa: E402
from specwire.runtime.dream.state import state_path  # noqa: E402
from specwire.runtime.facts.providers.connect import DEFAULT_TENANT, close_shared_pools  # noqa: E402
from specwire.runtime.owner.selection import select_remote  # noqa: E402
from specwire.runtime.pg.pool import open_pool  # noqa: E402
from specwire.runtime.sessions.postgres import PostgresSessionLogs  # noqa: E402
from specwire.runtime.wiki.store import ArticleDraft, WikiStore  # noqa: E402

pytestmark = pytest.mark.postgres

SPEC = "demo"
SESSION = "sess_00112233445566ff"
LATER = "sess_99887766554433aa"


def at(*when: int) -> Any:
    return lambda: datetime(*when, tzinfo=UTC)


@pytest.fixture
def database(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    uri = PostgresServerForTests.fresh_database()
    monkeypatch.setenv("CONSOLE_DATABASE_URL", uri)
    yield uri
    close_shared_pools()
    PostgresServerForTests.drop_database(uri)


@pytest.fixture
def pool(database: str) -> Iterator[Any]:
    opened = open_pool(database, max_size=2)
    yield opened
    opened.close()


def test_the_console_shows_sessions_continuity_wiki_and_dream_from_the_database(
    tmp_path: Path, pool: Any
) -> None:
    selection = select_remote(tmp_path, SPEC, None, None)
    layout = selection.layout
    volume = volume_on(pool, layout.root, tenant=DEFAULT_TENANT, spec=SPEC)
    store = ContinuityStore(layout, proof_mode="off", volume=volume)
    store.write_focus("ship release 2.1 from the database")
    store.create_plan("Release 2.1", ["build", "verify"])
    wiki = WikiStore(layout, now=Clock(), volume=volume)
    wiki.write(ArticleDraft("deploys", "Deploys", "Run make ship."), expected_version=None)
    wiki.write(
        ArticleDraft("deploys", "Deploys", "Run make ship, then make verify."), expected_version=1
    )
    volume.write(state_path(layout), json.dumps({"run": "2026-12-07", "steps": []}))
    logs = PostgresSessionLogs(pool, tenant=DEFAULT_TENANT, spec=SPEC, now=at(2026, 12, 1, 12))
    log = logs.open(SESSION)
    log.append("session_start", {"spec": SPEC, "target": "cli"})
    log.append("user_message", {"text": "run the release checks", "turn": 1})
    log.append("tool_use", {"id": "tu_1", "name": "bash", "input": {"command": "make test"}})
    log.append(
        "tool_result", {"toolUseId": "tu_1", "name": "bash", "isError": False, "text": "42 passed"}
    )
    log.append("assistant_message", {"text": "all green", "turn": 1, "usage": {"input": 812}})
    later = PostgresSessionLogs(pool, tenant=DEFAULT_TENANT, spec=SPEC, now=at(2026, 12, 8, 9, 30))
    later.open(LATER).append("session_start", {"spec": SPEC, "target": "cli"})
    # Another tenant's log under the same spec is not this console's.
    PostgresSessionLogs(pool, tenant="other", spec=SPEC).open("sess_0000000000000bad").append(
        "session_start", {"spec": SPEC}
    )

    data = ConsoleData(selection, BackendOptions(backend="postgres", dsn="$CONSOLE_DATABASE_URL"))
    data.open()
    try:
        browser = logged_in(data)
        listing = browser.get("/sessions").text
        assert SESSION in listing and LATER in listing
        assert "sess_0000000000000bad" not in listing
        # Newest first, by the time of each log's latest event.
        assert listing.index(LATER) < listing.index(SESSION)
        assert "2026-12-08T09:30:00" in listing and "2026-12-01T12:00:00" in listing
        timeline = browser.get(f"/sessions/{SESSION}").text
        assert 'id="tool-tu_1"' in timeline and "42 passed" in timeline
        assert "input 812" in timeline
        assert browser.get("/sessions/sess_0000000000000bad").status_code == 404
        continuity = browser.get("/continuity").text
        assert "ship release 2.1 from the database" in continuity and "Release 2.1" in continuity
        articles = browser.get("/wiki").text
        assert "deploys" in articles
        article = browser.get("/wiki/deploys").text
        assert "make verify" in article and "2 of 2" in article
        diff = browser.get("/wiki/deploys/diff?from=1&to=2").text
        assert "diff-add" in diff
        dream = browser.get("/evals").text
        assert "No dream run recorded yet" not in dream and "last run" in dream
        # Nothing was written under the root: the pages read the database.
        assert not any(path.is_file() for path in tmp_path.rglob("*"))
    finally:
        data.close()


def test_the_console_on_serve_reads_a_postgres_bundles_tenant_from_the_database(
    tmp_path: Path, pool: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``SPECWIRE_CONSOLE=1`` on a managed bundle whose facts and state are in PostgreSQL
    mounts the console over the named tenant's memory there (no file store is needed)."""
    from starlette.applications import Starlette
    from starlette.testclient import TestClient

    from specwire.runtime.hosts.http.console_mount import with_console
    from tests.runtime.console.console_client import BASE, TOKEN

    PostgresSessionLogs(pool, tenant="acme", spec=SPEC).open(SESSION).append(
        "user_message", {"text": "acme's question", "turn": 1}
    )
    PostgresSessionLogs(pool, tenant="globex", spec=SPEC).open(LATER).append(
        "user_message", {"text": "globex's question", "turn": 1}
    )
    monkeypatch.setenv("SPECWIRE_CONSOLE", "1")
    monkeypatch.setenv("SPECWIRE_CONSOLE_TOKEN", TOKEN)
    monkeypatch.setenv("SPECWIRE_CONSOLE_TENANT", "acme")
    app, close = with_console(
        Starlette(),
        SPEC,
        tmp_path,
        lambda line: None,
        tenants=["acme", "globex"],
        facts_backend="postgres",
        state_dsn="$CONSOLE_DATABASE_URL",
    )
    try:
        browser = TestClient(app, base_url=BASE, follow_redirects=False)
        login = browser.post("/console/login", data={"token": TOKEN}, headers={"origin": BASE})
        assert login.status_code == 303
        listing = browser.get("/console/sessions").text
        assert SESSION in listing and LATER not in listing
        assert "acme&#x27;s question" in browser.get(f"/console/sessions/{SESSION}").text
        assert browser.get("/console/").status_code == 200  # the facts page, from the database
    finally:
        close()
