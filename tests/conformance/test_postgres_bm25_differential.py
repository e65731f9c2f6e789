"""Review R2: a randomized differential test of PostgreSQL's BM25 rankings on small corpora made
of ties (a handful of words, facts of a few lengths, so many facts score exactly alike), proven
facts, scope keys, forgotten and superseded facts, for k = 1..10. Every PostgreSQL variant
(score thresholds only, postings at once, per-term postings depths, budgets that hand over
mid-way) must rank byte-equal to the local store: the same texts in the same order with the
same scores, ties going to the older fact."""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conformance_harness import PostgresTarget

from specwire.runtime.core.scopes import AGENT, ScopeKey
from specwire.runtime.facts.model import Provenance
from specwire.runtime.facts.providers.protocol import (
    ForgetRequest,
    LocalFactProvider,
    RecallRequest,
    RetainRequest,
    UpdateRequest,
)
from specwire.runtime.facts.store import FactStore

pytestmark = pytest.mark.postgres

SPEC = "bm25-differential"
WORDS = ["ash", "birch", "cedar", "doum", "elm", "fir"]
WEIGHTS = [8.0, 5.0, 3.0, 2.0, 1.0, 0.5]
KEYS = [AGENT, ScopeKey("user", "ana"), ScopeKey("user", "bob")]
VISIBLE = [(AGENT,), (AGENT, KEYS[1]), (KEYS[2],), tuple(KEYS)]


@pytest.fixture
def pg(tmp_path: Path) -> Iterator[PostgresTarget]:
    target = PostgresTarget(tmp_path)
    try:
        yield target
    finally:
        target.close()


def _ranking(provider: Any, query: str, k: int, visible: tuple[ScopeKey, ...]) -> list[Any]:
    hits = provider.recall(RecallRequest(query, k, visible=visible)).hits
    return [(hit.text, hit.score) for hit in hits]


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_every_variant_ranks_byte_equal_to_the_local_store(
    pg: PostgresTarget, tmp_path: Path, seed: int
) -> None:
    rng = random.Random(seed)
    tenant = f"tenant-{seed}"
    store = FactStore.open(tmp_path / "facts.sqlite3", now=pg.clock, screen=None)
    local = LocalFactProvider(store)
    writer = pg.make(tenant, SPEC, screen=None)
    proof = Provenance("s-1", ("tool-1",))
    ids: list[tuple[str, str]] = []
    scopes: list[ScopeKey] = []
    for n in range(rng.randrange(60, 160)):
        words = rng.choices(WORDS, WEIGHTS, k=rng.randrange(1, 4))
        # Every fact is one unique word longer than its query words: facts of the same words
        # tie exactly, in any order of them.
        text = " ".join([*words, f"u{n}"])
        scopes.append(rng.choice(KEYS))
        request = RetainRequest(
            text, provenance=proof if rng.random() < 0.3 else None, scope=scopes[-1]
        )
        ids.append((local.retain(request).id, writer.retain(request).id))
    changed = rng.sample(range(len(ids)), len(ids) // 5)
    for at in changed[: len(changed) // 2]:
        assert local.forget(ForgetRequest(id=ids[at][0])).removed == 1
        assert writer.forget(ForgetRequest(id=ids[at][1])).removed == 1
    for n, at in enumerate(changed[len(changed) // 2 :]):
        # Superseded by a newer fact of the same scope key, or updated in place (every other
        # one): either way the new text is the newer fact when it ties.
        text = " ".join([*rng.choices(WORDS, WEIGHTS, k=rng.randrange(1, 4)), f"v{at}"])
        scope = scopes[at]
        if n % 2:
            visible = (scope,)
            local.update(UpdateRequest(ids[at][0], text, visible=visible))
            writer.update(UpdateRequest(ids[at][1], text, visible=visible))
            continue
        local.retain(RetainRequest(text, supersedes=ids[at][0], scope=scope))
        writer.retain(RetainRequest(text, supersedes=ids[at][1], scope=scope))
    variants = {
        "writer": writer,
        "thresholds": pg.make(tenant, SPEC, screen=None, bm25_postings_from=None),
        "postings": pg.make(tenant, SPEC, screen=None, bm25_postings_from=0, bm25_scored_at_most=0),
        "pruned": pg.make(
            tenant,
            SPEC,
            screen=None,
            bm25_postings_from=0,
            bm25_scored_at_most=0,
            bm25_postings_rare=3,
        ),
        "per-term": pg.make(
            tenant, SPEC, screen=None, bm25_postings_from=0, bm25_scored_at_most=1_000_000
        ),
        "budget-1": pg.make(tenant, SPEC, screen=None, bm25_postings_from=0, bm25_scored_at_most=1),
        "budget-4": pg.make(
            tenant,
            SPEC,
            screen=None,
            bm25_postings_from=0,
            bm25_scored_at_most=4,
            bm25_postings_rare=2,
        ),
    }
    diverging, tied = [], 0
    for _ in range(40):
        query = " ".join(rng.choices(WORDS, k=rng.randrange(1, 4)))
        visible = rng.choice(VISIBLE)
        for k in range(1, 11):
            expected = _ranking(local, query, k, visible)
            tied += len({score for _, score in expected}) < len(expected)
            for name, provider in variants.items():
                got = _ranking(provider, query, k, visible)
                if got != expected:
                    diverging.append((name, query, k, visible, expected, got))
    store.close()
    assert diverging[:3] == []
    assert tied > 40  # the corpus is made of ties: the test can tell their order


def test_an_updated_fact_ties_as_the_file_store_ties_it(pg: PostgresTarget, tmp_path: Path) -> None:
    from specwire.runtime.facts.providers.protocol import UpdateRequest

    store = FactStore.open(tmp_path / "facts.sqlite3", now=pg.clock, screen=None)
    local = LocalFactProvider(store)
    postgres = pg.make("tenant-u", SPEC, screen=None)
    ids = [
        (local.retain(RetainRequest(text)).id, postgres.retain(RetainRequest(text)).id)
        for text in ("maple u0", "maple u1")
    ]
    local.update(UpdateRequest(ids[0][0], "maple v0"))
    postgres.update(UpdateRequest(ids[0][1], "maple v0"))
    expected = _ranking(local, "maple", 2, (AGENT,))
    store.close()
    assert [text for text, _ in expected] == ["maple u1", "maple v0"]
    assert _ranking(postgres, "maple", 2, (AGENT,)) == expected
