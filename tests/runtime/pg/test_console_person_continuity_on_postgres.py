"""The console's Continuity page over a managed tenant whose state is in PostgreSQL
(``--backend postgres``, ``memory.state: postgres``): ``?user=ID`` / ``?conversation=ID`` show
that person's working memory from the database (the tenant's spec's documents under
``state/<spec>/sessions/user-<sha256>/``), never another person's or another tenant's, and
nothing is written under the root; in-process, on a real server."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "console"))
from console_client import logged_in  # noqa: E402
from state_support import PostgresServerForTests, volume_on  # noqa: E402

from specwire.runtime.console.data import BackendOptions, ConsoleData  # noqa: E402
from specwire.runtime.continuity.store import ContinuityStore  # noqa: E402
from specwire.runtime.core.scopes import ScopeKey  # noqa: E402
from specwire.runtime.facts.providers.connect import close_shared_pools  # noqa: E402
from specwire.runtime.owner.selection import select_remote  # noqa: E402
from specwire.runtime.pg.pool import open_pool  # noqa: E402

pytestmark = pytest.mark.postgres

SPEC = "concierge"


@pytest.fixture
def database(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    uri = PostgresServerForTests.fresh_database()
    monkeypatch.setenv("CONSOLE_DATABASE_URL", uri)
    yield uri
    close_shared_pools()
    PostgresServerForTests.drop_database(uri)


def test_the_console_shows_one_persons_continuity_from_the_database(
    tmp_path: Path, database: str
) -> None:
    pool: Any = open_pool(database, max_size=2)
    try:
        for tenant, focus in (("acme", "acme ana visa paperwork"), ("globex", "globex ana")):
            layout = select_remote(tmp_path, SPEC, tenant, None).layout
            volume = volume_on(pool, layout.root, tenant=tenant, spec=SPEC)
            for key, text in (
                (ScopeKey("user", "ana"), focus),
                (ScopeKey("user", "bob"), f"{tenant} bob window seat"),
            ):
                store = ContinuityStore(
                    layout, scope_dir=layout.audience_state_dir(key), volume=volume
                )
                store.write_focus(text)
            ContinuityStore(layout, volume=volume).write_focus(f"{tenant} shared focus")
    finally:
        pool.close()

    selection = select_remote(tmp_path, SPEC, "acme", None)
    data = ConsoleData(
        selection,
        BackendOptions(backend="postgres", dsn="$CONSOLE_DATABASE_URL", tenant="acme"),
    )
    data.open()
    try:
        browser = logged_in(data)
        hers = browser.get("/continuity?user=ana").text
        assert "acme ana visa paperwork" in hers
        assert "bob" not in hers and "shared focus" not in hers and "globex" not in hers
        shared = browser.get("/continuity").text
        assert "acme shared focus" in shared and "visa" not in shared
        nobody = browser.get("/continuity?conversation=kiosk-9").text
        assert "visa" not in nobody and "bob" not in nobody and "shared focus" not in nobody
        assert not any(path.is_file() for path in tmp_path.rglob("*"))
    finally:
        data.close()
