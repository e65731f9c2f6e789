"""Review H10: the BM25 postings rank every fact of a tenant's spec (one binding holds every
scope key's facts), so the visible keys are applied after the postings' top ``depth``. Other
people's facts that outscore the caller's, in the same binding and in another tenant, must
neither surface nor crowd the caller's own facts out of the top ``k``: the postings path ranks
as the score thresholds do, among the visible facts only."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conformance_harness import PostgresTarget

from specwire.runtime.core.scopes import AGENT, ScopeKey
from specwire.runtime.facts.providers.protocol import ForgetRequest, RecallRequest, RetainRequest

pytestmark = pytest.mark.postgres

SPEC = "scoped-bm25-bot"
ANA = ScopeKey("user", "ana")
BOB = ScopeKey("user", "bob")
CHAT = ScopeKey("conversation", "bob/chat-1")
K = 5


@pytest.fixture
def pg(tmp_path: Path) -> Iterator[PostgresTarget]:
    target = PostgresTarget(tmp_path)
    try:
        yield target
    finally:
        target.close()


def _hits(provider: Any, query: str, *visible: ScopeKey) -> list[tuple[str, float, ScopeKey]]:
    request = RecallRequest(query, K, visible=visible)
    return [(hit.text, hit.score, hit.scope) for hit in provider.recall(request).hits]


def test_other_scopes_and_tenants_never_surface_nor_crowd_out_the_callers_facts(
    pg: PostgresTarget,
) -> None:
    writer = pg.make("tenant-a", SPEC, screen=None)
    # Bob's facts: short, so they outscore everything the caller may see (the postings' first
    # ``depth`` facts are all his).
    writer.retain_many(
        [RetainRequest(f"harbour ferry {n}", scope=BOB) for n in range(700)]
        + [RetainRequest(f"harbour ferry chat {n}", scope=CHAT) for n in range(300)]
    )
    # Ana's and the agent's: longer, so lower scores.
    mine = [
        RetainRequest(f"the harbour ferry timetable changes in spring, note {n}", scope=ANA)
        for n in range(8)
    ] + [
        RetainRequest(
            f"the harbour ferry leaves from pier {n} on weekdays and sundays", scope=AGENT
        )
        for n in range(4)
    ]
    writer.retain_many(mine)
    other = pg.make("tenant-b", SPEC, screen=None)
    other.retain_many([RetainRequest(f"harbour ferry {n}", scope=ANA) for n in range(500)])

    thresholds = pg.make("tenant-a", SPEC, screen=None, bm25_postings_from=None)
    postings = pg.make("tenant-a", SPEC, screen=None, bm25_postings_from=0, bm25_scored_at_most=0)
    budgeted = pg.make(
        "tenant-a",
        SPEC,
        screen=None,
        bm25_postings_from=0,
        bm25_scored_at_most=3,
        bm25_postings_rare=10,
    )
    pruned = pg.make(
        "tenant-a",
        SPEC,
        screen=None,
        bm25_postings_from=0,
        bm25_scored_at_most=0,
        bm25_postings_rare=10,
    )
    query = "harbour ferry"
    expected = _hits(thresholds, query, AGENT, ANA)
    assert len(expected) == K
    assert {scope for _, _, scope in expected} <= {AGENT, ANA}
    assert all("harbour ferry" in text and len(text) > 30 for text, _, _ in expected)
    for provider in (postings, budgeted, pruned):
        assert _hits(provider, query, AGENT, ANA) == expected
    # A forget by query as Ana only ever reaches what she may see, best first.
    removed = postings.forget(ForgetRequest(query="harbour ferry", visible=(ANA,)))
    assert removed.removed == 8  # hers: not Bob's 700, the chat's 300 nor tenant-b's 500
    assert {scope for _, _, scope in _hits(postings, query, AGENT, ANA)} == {AGENT}
    assert len(_hits(postings, query, BOB)) == K
    assert len(_hits(other, query, ANA)) == K
