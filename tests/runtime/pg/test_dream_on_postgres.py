"""The dream with ``memory.state: postgres``: its state, lock, continuity, wiki and trash are
the database volume's (hosts on any machine share the window), and it writes no file there."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "continuity"))
from continuity_support import Clock, Logs  # noqa: E402
from state_support import PostgresServerForTests, volume_on  # noqa: E402

from specwire.runtime.continuity.store import ContinuityStore  # noqa: E402
from specwire.runtime.core.paths import StoreLayout  # noqa: E402
from specwire.runtime.dream.engine import run_dream  # noqa: E402
from specwire.runtime.dream.settings import DreamSettings  # noqa: E402
from specwire.runtime.dream.state import read_state  # noqa: E402
from specwire.runtime.facts.providers.local_admin import LocalFactAdmin  # noqa: E402
from specwire.runtime.facts.store import FactStore  # noqa: E402
from specwire.runtime.pg.pool import open_pool  # noqa: E402
from specwire.runtime.wiki.store import ArticleDraft, WikiStore  # noqa: E402

pytestmark = pytest.mark.postgres


@pytest.fixture
def pg() -> Iterator[Any]:
    uri = PostgresServerForTests.fresh_database()
    pool = open_pool(uri, max_size=6)
    yield pool
    pool.close()
    PostgresServerForTests.drop_database(uri)


def test_a_dream_keeps_its_window_and_purges_the_trash_in_the_database(
    pg: Any, tmp_path: Path
) -> None:
    layout = StoreLayout.for_cwd(tmp_path / "worker", "demo")
    clock = Clock()
    store = ContinuityStore(layout, now=clock, log=Logs(), volume=volume_on(pg, layout.root))
    store.write_focus("old focus")
    store.clear("focus")
    WikiStore(layout, now=clock, volume=volume_on(pg, layout.root)).write(
        ArticleDraft("runbook", "Runbook", "Restart the queue."), expected_version=None
    )
    clock.advance(timedelta(days=60).total_seconds())

    facts_elsewhere = tmp_path / "facts.sqlite3"  # the fact steps' backend is not this test's

    @contextmanager
    def facts() -> Iterator[LocalFactAdmin]:
        with FactStore.open(facts_elsewhere, now=clock) as opened:
            yield LocalFactAdmin(opened)

    def dream() -> Any:
        return run_dream(
            layout,
            DreamSettings(every_s=86_400),
            now=clock,
            facts=facts,
            volume=volume_on(pg, layout.root),  # another host's view of the same database
        )

    outcome = dream()
    assert outcome.status == "ok", outcome.errors
    assert (
        outcome.continuity.trash_purged == 1
        and outcome.wiki.articles == 1
        and outcome.wiki.stale == 1
    )
    assert store.list_trash() == []
    state = read_state(layout, volume_on(pg, layout.root))
    assert state is not None and state["windowKey"] == outcome.window_key
    again = dream()
    assert again.note is not None and "already ran in this window" in again.note
    assert not (tmp_path / "worker").exists()
