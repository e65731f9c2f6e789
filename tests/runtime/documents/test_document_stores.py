"""The document stores' shared semantics, on the file store and on PostgreSQL alike: ids,
revisions as preconditions, frozen documents, removed ids kept reserved, limits, listing order
and pages, tenants apart, and two writers racing for one revision."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from document_targets import TARGETS, Target, target_ids

from specwire.runtime.documents.model import (
    OWNER,
    PAGE_SIZE,
    SUMMARY_MAX_BYTES,
    TEXT_MAX_BYTES,
    TITLE_MAX_BYTES,
    AgentWritesDisabled,
    DocumentExists,
    DocumentNotFound,
    DocumentTooLarge,
    InvalidDocument,
    RevisionMismatch,
    Writer,
)
from specwire.runtime.documents.store import DocumentStore
from specwire.runtime.safety.redaction import register_secret

AGENT = Writer("agent", "sess_0123456789abcdef")


@pytest.fixture(params=TARGETS, ids=target_ids)
def target_factory(request: pytest.FixtureRequest) -> Callable[[Path], Target]:
    factory: Callable[[Path], Target] = request.param
    return factory


@pytest.fixture
def target(target_factory: Callable[[Path], Target], tmp_path: Path) -> Iterator[Target]:
    made = target_factory(tmp_path)
    try:
        yield made
    finally:
        made.close()


@pytest.fixture
def store(target: Target) -> DocumentStore:
    return target.make()


def test_a_created_document_reads_back_at_revision_1(store: DocumentStore) -> None:
    made = store.create("workshop", title="Workshop notes", text="Node 22.", summary="runtime")
    read = store.get("workshop")
    assert read == made
    assert (read.revision, read.writer, read.agent_writes, read.bytes) == ("1", OWNER, "enabled", 8)
    assert read.to_data()["maxBytes"] == TEXT_MAX_BYTES
    assert "text" not in read.meta()


def test_create_refuses_a_used_id_and_a_malformed_one(store: DocumentStore) -> None:
    store.create("plan", title="Plan")
    with pytest.raises(DocumentExists, match="'plan' exists"):
        store.create("plan", title="Again")
    for bad in ("", "Plan", "-plan", "a/b", "..", "x" * 129):
        with pytest.raises(InvalidDocument):
            store.create(bad, title="T")
    with pytest.raises(DocumentNotFound, match="does not exist"):
        store.get("missing")


def test_a_change_needs_the_current_revision(store: DocumentStore) -> None:
    store.create("plan", title="Plan", text="v1", summary="first")
    second = store.replace("plan", text="v2", summary=None, if_match="1", writer=AGENT)
    assert (second.revision, second.text, second.summary, second.writer) == (
        "2",
        "v2",
        "first",
        AGENT,
    )
    with pytest.raises(RevisionMismatch) as stale:
        store.replace("plan", text="v2'", summary="", if_match="1", writer=AGENT)
    assert stale.value.current.text == "v2" and stale.value.current.revision == "2"
    assert store.get("plan").text == "v2"
    cleared = store.replace("plan", text="v3", summary="", if_match="2", writer=OWNER)
    assert (cleared.revision, cleared.summary) == ("3", "")
    with pytest.raises(RevisionMismatch):
        store.patch("plan", title="New", if_match="2")
    with pytest.raises(RevisionMismatch):
        store.remove("plan", if_match="2")


def test_a_frozen_document_refuses_agent_writes_but_not_the_owner(store: DocumentStore) -> None:
    store.create("plan", title="Plan", text="v1", frozen=True)
    with pytest.raises(AgentWritesDisabled):
        store.replace("plan", text="agent", summary=None, if_match="1", writer=AGENT)
    edited = store.replace("plan", text="owner", summary=None, if_match="1", writer=OWNER)
    thawed = store.patch("plan", agent_writes="enabled", if_match=edited.revision)
    assert (thawed.revision, thawed.frozen, thawed.text) == ("3", False, "owner")
    saved = store.replace("plan", text="agent", summary=None, if_match="3", writer=AGENT)
    frozen = store.patch("plan", agent_writes="disabled", if_match=saved.revision)
    with pytest.raises(AgentWritesDisabled):  # even with the current revision
        store.replace("plan", text="x", summary=None, if_match=frozen.revision, writer=AGENT)


def test_a_removed_id_stays_reserved_and_unlisted(store: DocumentStore) -> None:
    store.create("old", title="Old", text="secret plan")
    store.create("kept", title="Kept")
    store.remove("old", if_match="1")
    with pytest.raises(DocumentNotFound, match="was removed"):
        store.get("old")
    with pytest.raises(DocumentExists, match="stays reserved"):
        store.create("old", title="New")
    with pytest.raises(DocumentNotFound):
        store.replace("old", text="x", summary=None, if_match="1", writer=AGENT)
    assert [d.id for d in store.page(None, PAGE_SIZE).documents] == ["kept"]


def test_limits_are_utf8_bytes(store: DocumentStore) -> None:
    store.create("ok", title="é" * (TITLE_MAX_BYTES // 2), summary="é" * (SUMMARY_MAX_BYTES // 2))
    with pytest.raises(DocumentTooLarge) as title:
        store.create("t", title="é" * (TITLE_MAX_BYTES // 2) + "x")
    assert (title.value.field, title.value.size) == ("title", TITLE_MAX_BYTES + 1)
    with pytest.raises(InvalidDocument, match="needs a title"):
        store.create("t", title="  ")
    with pytest.raises(DocumentTooLarge) as summary:
        store.create("t", title="T", summary="s" * (SUMMARY_MAX_BYTES + 1))
    assert summary.value.field == "summary"
    store.create("big", title="Big", text="x" * TEXT_MAX_BYTES)
    with pytest.raises(DocumentTooLarge) as text:
        store.replace(
            "big", text="é" * (TEXT_MAX_BYTES // 2) + "x", summary=None, if_match="1", writer=AGENT
        )
    assert (text.value.field, text.value.max_bytes) == ("text", TEXT_MAX_BYTES)
    assert store.get("big").revision == "1"
    with pytest.raises(InvalidDocument, match="NUL"):
        store.create("nul", title="T", text="a\x00b")


def test_a_registered_secret_never_reaches_the_store(store: DocumentStore) -> None:
    secret = "sk-test-Document" + "Secret0123456789"
    register_secret("DOC_API_KEY", secret)
    store.create("keys", title="Keys", text=f"the key is {secret}")
    text = store.get("keys").text
    assert secret not in text and "$DOC_API_KEY" in text


def test_listing_is_newest_first_then_by_id_and_pages_cover_everything(
    store: DocumentStore,
) -> None:
    for number in range(PAGE_SIZE + 7):
        store.create(f"doc-{number:03d}", title=f"Document {number}")
    store.replace("doc-000", text="touched", summary=None, if_match="1", writer=OWNER)
    first = store.page(None, PAGE_SIZE)
    assert len(first.documents) == PAGE_SIZE and first.next_after is not None
    assert first.documents[0].id == "doc-000"
    assert first.documents[1].id == f"doc-{PAGE_SIZE + 6:03d}"
    second = store.page(first.next_after, PAGE_SIZE)
    assert second.next_after is None
    ids = [d.id for d in (*first.documents, *second.documents)]
    assert sorted(ids) == [f"doc-{n:03d}" for n in range(PAGE_SIZE + 7)]
    assert len(set(ids)) == len(ids)


def test_same_time_entries_are_listed_by_id(target: Target) -> None:
    store = target.make()
    target.clock.step = timedelta(0)  # every change at the same millisecond
    for name in ("c", "a", "b"):
        store.create(name, title=name)
    page = store.page(None, 2)
    assert [d.id for d in page.documents] == ["a", "b"]
    assert [d.id for d in store.page(page.next_after, 2).documents] == ["c"]


def test_tenants_and_specs_keep_their_own_documents(target: Target) -> None:
    acme = target.make("tenant-acme", "spec")
    other = target.make("tenant-other", "spec")
    second_spec = target.make("tenant-acme", "other-spec")
    acme.create("plan", title="Acme's plan", text="acme only")
    with pytest.raises(DocumentNotFound):
        other.get("plan")
    with pytest.raises(DocumentNotFound):
        second_spec.get("plan")
    other.create("plan", title="Other's plan")
    assert acme.get("plan").text == "acme only"
    assert [d.id for d in second_spec.page(None, PAGE_SIZE).documents] == []


def test_two_writers_racing_for_one_revision_one_wins(target: Target) -> None:
    target.make().create("plan", title="Plan", text="v1")
    stores = [target.make(), target.make()]
    start = threading.Barrier(2)
    outcomes: list[str] = []

    def save(store: DocumentStore, text: str) -> None:
        start.wait()
        try:
            store.replace("plan", text=text, summary=None, if_match="1", writer=AGENT)
            outcomes.append("saved")
        except RevisionMismatch:
            outcomes.append("conflict")

    threads = [
        threading.Thread(target=save, args=(store, f"writer {n}")) for n, store in enumerate(stores)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(outcomes) == ["conflict", "saved"]
    assert target.make().get("plan").revision == "2"
