"""The wiki with ``memory.state: postgres``: articles and their versions in the database with
the files' bytes, a stale write refused across workers, another worker's edit seen at once,
and nothing on disk."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "continuity"))
from continuity_support import Clock  # noqa: E402
from state_support import (  # noqa: E402
    PostgresServerForTests,
    database_documents,
    file_documents,
    volume_on,
)

from specwire.runtime.core.paths import StoreLayout  # noqa: E402
from specwire.runtime.pg.pool import open_pool  # noqa: E402
from specwire.runtime.wiki.store import ArticleDraft, WikiConflict, WikiStore  # noqa: E402

pytestmark = pytest.mark.postgres


@pytest.fixture
def pg() -> Iterator[Any]:
    uri = PostgresServerForTests.fresh_database()
    pool = open_pool(uri, max_size=6)
    yield pool
    pool.close()
    PostgresServerForTests.drop_database(uri)


def edit(store: WikiStore, clock: Clock) -> None:
    store.write(ArticleDraft("importer", "Importer", "Reads CSV."), expected_version=None)
    clock.advance(30)
    store.write(ArticleDraft("importer", "Importer", "Reads CSV and JSON."), expected_version=1)
    store.write(ArticleDraft("loader", "Loader", "See [[importer]]."), expected_version=None)


def test_the_database_holds_the_bytes_the_files_would(pg: Any, tmp_path: Path) -> None:
    files = StoreLayout.for_cwd(tmp_path / "files", "demo")
    files_clock = Clock()
    edit(WikiStore(files, now=files_clock), files_clock)
    database = StoreLayout.for_cwd(tmp_path / "database", "demo")
    volume = volume_on(pg, database.root)
    database_clock = Clock()
    store = WikiStore(database, now=database_clock, volume=volume)
    edit(store, database_clock)

    expected = file_documents(files.root)
    assert "wiki/demo/versions/importer/1.md" in expected
    assert database_documents(volume) == expected
    assert store.get_version("importer", 1) is not None
    assert sorted(store.snapshot().articles) == ["importer", "loader"]
    assert not (tmp_path / "database").exists()


def test_a_stale_write_from_another_worker_is_refused_and_its_edit_seen(
    pg: Any, tmp_path: Path
) -> None:
    layout_a = StoreLayout.for_cwd(tmp_path / "a", "demo")
    layout_b = StoreLayout.for_cwd(tmp_path / "b", "demo")
    first = WikiStore(layout_a, now=Clock(), volume=volume_on(pg, layout_a.root))
    second = WikiStore(layout_b, now=Clock(), volume=volume_on(pg, layout_b.root))
    first.write(ArticleDraft("plan", "Plan", "v1"), expected_version=None)
    assert second.snapshot().articles["plan"].version == 1  # another worker's write, seen at once
    second.write(ArticleDraft("plan", "Plan", "v2 from b"), expected_version=1)
    with pytest.raises(WikiConflict, match="is at version 2"):
        first.write(ArticleDraft("plan", "Plan", "v2 from a"), expected_version=1)
    article = first.get("plan")
    assert article is not None and article.version == 2 and "from b" in article.body
