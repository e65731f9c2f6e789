"""The provider protocol over the local store: retain, recall, forget selectors, health."""

from __future__ import annotations

import os
import shutil
import threading
from pathlib import Path

import pytest
from facts_support import START, FakeClock

from specwire.runtime.facts.model import InvalidRequestError, Provenance
from specwire.runtime.facts.providers.protocol import (
    Capabilities,
    FactProvider,
    FactReader,
    ForgetRequest,
    LocalFactProvider,
    RecallRequest,
    RetainRequest,
)
from specwire.runtime.facts.store import FactStore


@pytest.fixture
def provider(store: FactStore) -> LocalFactProvider:
    return LocalFactProvider(store)


def test_the_local_provider_satisfies_the_protocol_and_declares_capabilities(
    provider: LocalFactProvider,
) -> None:
    assert isinstance(provider, FactProvider) and isinstance(provider, FactReader)
    caps = provider.capabilities()
    assert caps == Capabilities(
        lexical=True,
        semantic=False,
        ttl=True,
        supersede=True,
        provenance=True,
        forget_by_query=True,
        tombstones=True,
        subject_cascade=False,
        scopes=True,
        keys=True,
        point_read=True,
        metadata_filtering=True,
        writes=True,
        updates=True,
        deletes=True,
    )


def test_retain_appends_dedupes_on_request_and_supersedes_explicitly(
    provider: LocalFactProvider, store: FactStore
) -> None:
    first = provider.retain(RetainRequest("quarterly report due March 31", ("finance",)))
    assert first.created and first.expires_at is None
    same = provider.retain(RetainRequest("Quarterly report due  March 31", if_absent=True))
    assert (same.id, same.created) == (first.id, False)
    again = provider.retain(RetainRequest("quarterly report due March 31"))  # plain append
    assert again.created and again.id != first.id
    replaced = provider.retain(
        RetainRequest("quarterly report due April 7", ttl_ms=1000, supersedes=first.id)
    )
    assert replaced.superseded == first.id
    assert replaced.expires_at is not None
    old = store.get(first.id)
    assert old is not None and old.status == "superseded"
    assert old.fact.superseded_by == replaced.id


def test_retain_requests_are_validated_at_the_boundary() -> None:
    with pytest.raises(InvalidRequestError, match="supersedes is not a memory id"):
        RetainRequest("x", supersedes="fact-1")
    with pytest.raises(InvalidRequestError, match="cannot be combined"):
        RetainRequest("x", supersedes="mem_0123456789abcdef", if_absent=True)


def test_retain_refuses_bad_content_with_a_value_error(provider: LocalFactProvider) -> None:
    with pytest.raises(ValueError, match="too long"):
        provider.retain(RetainRequest("x" * 5000))
    with pytest.raises(ValueError, match="non-empty text"):
        provider.retain(RetainRequest("   "))


def test_recall_returns_unit_scores_best_first(provider: LocalFactProvider) -> None:
    provider.retain(RetainRequest("the staging database is pg-2"))
    provider.retain(RetainRequest("the lunch place is closed"))
    provider.retain(RetainRequest("staging database password rotates; staging database"))
    provider.retain(
        RetainRequest(
            "staging deploys need approval",
            provenance=Provenance("sess_0123456789abcdef", ("tu_1",)),
        )
    )
    response = provider.recall(RecallRequest("staging database", limit=5))
    assert len(response.hits) == 3
    scores = [hit.score for hit in response.hits]
    assert all(0 <= score < 1 for score in scores)
    assert scores == sorted(scores, reverse=True)
    assert [hit.evidence_backed for hit in response.hits].count(True) == 1
    assert provider.recall(RecallRequest("what is the")).hits == ()


@pytest.mark.parametrize("limit", [0, 51, -1])
def test_recall_limit_is_bounded(limit: int) -> None:
    with pytest.raises(InvalidRequestError, match="limit"):
        RecallRequest("x", limit=limit)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({}, "exactly one of `id` or `query`"),
        ({"id": "mem_0123456789abcdef", "query": "x"}, "exactly one of `id` or `query`"),
        ({"id": "not-an-id"}, "not a memory id"),
        ({"query": "   "}, "query must not be empty"),
    ],
)
def test_forget_needs_exactly_one_valid_selector(kwargs: dict[str, str], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        ForgetRequest(**kwargs)


def test_forget_by_id_and_by_query(provider: LocalFactProvider, store: FactStore) -> None:
    a = provider.retain(RetainRequest("alpha launch is in May"))
    b = provider.retain(RetainRequest("alpha budget is 10k"))
    c = provider.retain(RetainRequest("beta launch is in June"))
    by_id = provider.forget(ForgetRequest(id=a.id, reason="moved"))
    assert (by_id.removed, by_id.ids) == (1, (a.id,))
    gone = provider.forget(ForgetRequest(id=a.id))  # already gone: removed 0, no error
    assert (gone.removed, gone.ids) == (0, ())
    by_query = provider.forget(ForgetRequest(query="alpha"))
    assert by_query.ids == (b.id,)
    assert provider.forget(ForgetRequest(query="gamma")).removed == 0
    assert store.size() == 1 and store.get(c.id) is not None


def test_an_id_shaped_query_is_searched_as_text(provider: LocalFactProvider) -> None:
    kept = provider.retain(RetainRequest("unrelated fact"))
    result = provider.forget(ForgetRequest(query=kept.id))
    assert result.removed == 0  # the query selector never forgets by id


def test_health_is_ok_and_stamped_with_the_check_time(
    provider: LocalFactProvider, clock: FakeClock
) -> None:
    health = provider.health()
    assert (health.ok, health.message, health.checked_at) == (True, None, START)


def test_health_fails_when_the_directory_is_removed(db_path: Path, clock: FakeClock) -> None:
    with FactStore.open(db_path, now=clock) as store:
        provider = LocalFactProvider(store)
        store.remember("created")
        shutil.rmtree(db_path.parent)
        health = provider.health()
        assert not health.ok and health.message is not None
        assert "removed" in health.message


def test_health_fails_when_the_directory_is_replaced_by_a_file(db_path: Path) -> None:
    with FactStore.open(db_path) as store:
        provider = LocalFactProvider(store)
        store.remember("created")
        shutil.rmtree(db_path.parent)
        db_path.parent.write_text("not a directory")
        health = provider.health()
        assert not health.ok and health.message is not None
        assert health.message == "the fact store file cannot be checked (Not a directory)"


@pytest.mark.skipif(os.geteuid() == 0, reason="root bypasses directory permissions")
def test_health_fails_when_the_directory_is_not_writable(db_path: Path) -> None:
    with FactStore.open(db_path) as store:
        provider = LocalFactProvider(store)
        store.remember("created")
        db_path.parent.chmod(0o500)
        try:
            health = provider.health()
        finally:
            db_path.parent.chmod(0o700)
        assert not health.ok and health.message == "the fact store directory is not writable"


def test_health_reports_a_closed_store(db_path: Path) -> None:
    store = FactStore.open(db_path)
    provider = LocalFactProvider(store)
    store.close()
    health = provider.health()
    assert (health.ok, health.message) == (False, "the fact store is closed")


def test_health_answers_promptly_while_the_store_is_busy(store: FactStore) -> None:
    provider = LocalFactProvider(store)
    held = threading.Event()
    release = threading.Event()

    def hold() -> None:
        with store._lock:  # a long operation in another thread
            held.set()
            release.wait(5)

    worker = threading.Thread(target=hold)
    worker.start()
    try:
        assert held.wait(5)
        health = provider.health()
    finally:
        release.set()
        worker.join()
    assert (health.ok, health.message) == (False, "health check timeout")
    assert provider.health().ok
