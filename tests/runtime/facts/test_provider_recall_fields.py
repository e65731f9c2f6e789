"""Remem's recall fields on the embedded store's provider: deadline and cancel, types, topics,
the token budget, and the descriptor (the PostgreSQL and HTTP providers share
``recall_bounds``; their conformance targets run the same requests)."""

from __future__ import annotations

import threading
import time

import pytest

from specwire.runtime.facts.providers.protocol import (
    DeadlineExceeded,
    DescribedProvider,
    LocalFactProvider,
    RecallRequest,
)
from specwire.runtime.facts.store import FactStore

FACTS = (
    "The staging cluster runs in eu-west-1 on three nodes.",
    "The production cluster runs in us-east-2 behind the shared load balancer.",
    "Ana owns the billing service and its on-call rotation.",
)


@pytest.fixture
def provider(store: FactStore) -> LocalFactProvider:
    for text in FACTS:
        store.remember(text)
    return LocalFactProvider(store, name="main")


def texts(provider: LocalFactProvider, request: RecallRequest) -> list[str]:
    return [hit.text for hit in provider.recall(request).hits]


def test_a_passed_deadline_or_a_cancel_raises_before_any_work(provider: LocalFactProvider) -> None:
    with pytest.raises(DeadlineExceeded, match="deadline"):
        provider.recall(RecallRequest("cluster", deadline=time.monotonic() - 0.001))
    cancel = threading.Event()
    cancel.set()
    with pytest.raises(DeadlineExceeded, match="cancelled"):
        provider.recall(RecallRequest("cluster", cancel=cancel))
    later = time.monotonic() + 60
    assert len(texts(provider, RecallRequest("cluster", deadline=later))) == 2


def test_facts_have_no_type_so_a_type_filter_finds_none(provider: LocalFactProvider) -> None:
    assert texts(provider, RecallRequest("cluster", types=("decision",))) == []


def test_topics_widen_the_query(provider: LocalFactProvider) -> None:
    assert texts(provider, RecallRequest("who is paged")) == []
    assert texts(provider, RecallRequest("who is paged", topics=("billing",))) == [FACTS[2]]


def test_the_token_budget_keeps_whole_hits_and_never_cuts_one(provider: LocalFactProvider) -> None:
    whole = texts(provider, RecallRequest("cluster"))
    first = -(-len(whole[0].encode("utf-8")) // 4)
    assert texts(provider, RecallRequest("cluster", max_tokens=first)) == whole[:1]
    assert texts(provider, RecallRequest("cluster", max_tokens=first - 1)) == []


def test_the_local_provider_describes_itself(provider: LocalFactProvider) -> None:
    assert isinstance(provider, DescribedProvider)
    descriptor = provider.descriptor()
    assert (descriptor.id, descriptor.kind, descriptor.read_only) == ("main", "file", False)
