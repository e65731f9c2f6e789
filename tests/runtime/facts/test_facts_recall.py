"""Recall: BM25 ranking, stop-word pruning, the evidence boost, and FTS-syntax safety."""

from __future__ import annotations

import pytest
from facts_support import FakeClock
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from specwire.runtime.facts.lexical.ranking import EVIDENCE_FACTOR
from specwire.runtime.facts.model import InvalidRequestError, Provenance
from specwire.runtime.facts.store import FactStore
from specwire.runtime.facts.text import match_expression, query_terms, tokenize

DISTRACTORS = [
    "the deploy pipeline runs on Tuesdays",
    "lunch is at noon",
    "the office is closed on Friday",
    "what is the capital of France",
]


def texts(store: FactStore, query: str, k: int = 5) -> list[str]:
    return [hit.fact.text for hit in store.recall(query, k)]


def test_query_terms_drop_stop_words_and_contraction_fragments() -> None:
    assert query_terms("What is the customer's plan?") == ["customer", "plan"]
    assert query_terms("plan PLAN Plan") == ["plan"]
    assert query_terms("what is the") == []
    assert tokenize("Café-crème #42") == ["café", "crème", "42"]
    assert match_expression(["customer", "plan"]) == '"customer" OR "plan"'
    assert match_expression([]) is None


def test_stop_word_pruning_finds_the_fact_behind_a_question(store: FactStore) -> None:
    for text in DISTRACTORS:
        store.remember(text)
    store.remember("customer plan is Enterprise")
    assert texts(store, "what is the customer's plan")[0] == "customer plan is Enterprise"
    # Without pruning, "what is the" would match every distractor; with it none of them match.
    assert texts(store, "what is the customer's plan") == ["customer plan is Enterprise"]


@pytest.mark.parametrize("query", ["", "   ", "the a an is are", "?!", "'s"])
def test_an_empty_or_all_stop_word_query_returns_nothing(store: FactStore, query: str) -> None:
    store.remember("the a an is are")  # even a fact made only of stop words
    assert store.recall(query) == []


def test_more_matching_terms_rank_higher_with_positive_descending_scores(
    store: FactStore,
) -> None:
    for text in DISTRACTORS:
        store.remember(text)
    store.remember("invoice export")
    store.remember("invoice export fails for EUR accounts")
    store.remember("EUR accounts invoice export bug reproduced")
    hits = store.recall("invoice export EUR accounts")
    assert [h.fact.text for h in hits][-1] == "invoice export"
    scores = [h.score for h in hits]
    assert all(score > 0 for score in scores)
    assert scores == sorted(scores, reverse=True)


def test_tags_are_searchable(store: FactStore) -> None:
    store.remember("prefers short answers", ["style"])
    store.remember("lives in Lisbon", ["personal"])
    assert texts(store, "style") == ["prefers short answers"]


def test_ties_break_by_creation_order(store: FactStore, clock: FakeClock) -> None:
    for text in DISTRACTORS:
        store.remember(text)
    ids = []
    for _ in range(3):
        clock.advance(seconds=1)
        ids.append(store.remember("backup runs nightly").id)
    assert [h.fact.id for h in store.recall("backup nightly")] == ids


def test_evidence_backed_facts_get_a_small_multiplicative_boost(store: FactStore) -> None:
    for text in DISTRACTORS:
        store.remember(text)
    plain = store.remember("rollback needs the db snapshot")
    proven = store.remember(
        "rollback needs the db snapshot", provenance=Provenance("s", ("tu_restore",))
    )
    better = store.remember("rollback snapshot db needs rollback snapshot")
    hits = {h.fact.id: h.score for h in store.recall("rollback snapshot")}
    order = [h.fact.id for h in store.recall("rollback snapshot")]
    # The boost breaks the tie between equal texts, in favour of the proven one...
    assert order.index(proven.id) < order.index(plain.id)
    assert hits[proven.id] == pytest.approx(hits[plain.id] * EVIDENCE_FACTOR)
    # ...but never lifts it over a clearly better lexical match.
    assert order[0] == better.id


def test_recall_sees_live_facts_only(store: FactStore, clock: FakeClock) -> None:
    old = store.remember("vpn gateway is gw1")
    store.supersede(old.id, "vpn gateway is gw2")
    store.forget(store.remember("vpn token is 1234").id)
    store.remember("vpn expires", ttl_ms=1)
    clock.advance(milliseconds=1)
    assert texts(store, "vpn") == ["vpn gateway is gw2"]


def test_k_bounds_the_result_and_must_be_positive(store: FactStore) -> None:
    for i in range(7):
        store.remember(f"note number {i} about kafka")
    assert len(store.recall("kafka", 3)) == 3
    assert len(store.recall("kafka")) == 5
    with pytest.raises(InvalidRequestError, match="k must be at least 1"):
        store.recall("kafka", 0)


def test_unicode_text_is_tokenized_the_same_way_on_both_sides(store: FactStore) -> None:
    store.remember("prefers café crème over espresso ☕")
    store.remember("顧客 plan 東京")
    assert texts(store, "café") == ["prefers café crème over espresso ☕"]
    assert texts(store, "東京 plan") == ["顧客 plan 東京"]
    assert texts(store, "東京") == ["顧客 plan 東京"]
    assert store.recall("☕ ☕") == []  # symbols are no words: nothing to search


FTS_SYNTAX = [
    '"a" OR *',
    '"',
    '"""',
    'customer" OR "x',
    "NEAR(customer plan, 2)",
    "customer NEAR plan",
    "plan*",
    "*",
    "customer AND NOT plan",
    "^plan",
    "terms:plan",
    "{terms}: plan",
    "(plan",
    "plan)",
    "customer + plan - x",
    "'; DROP TABLE facts; --",
    "\x00plan",
    "plän ünïcode 顧客",
]


@pytest.mark.parametrize("query", FTS_SYNTAX)
def test_fts_syntax_in_a_query_is_plain_text(store: FactStore, query: str) -> None:
    store.remember("customer plan is Enterprise")
    store.remember("terms of service were updated")
    hits = store.recall(query)
    expected = set(query_terms(query)) & {"customer", "plan", "terms"}
    assert bool(hits) == bool(expected)
    assert store.size() == 2


@settings(max_examples=150, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(query=st.text(max_size=80))
def test_no_query_text_can_break_recall(store: FactStore, query: str) -> None:
    if store.size() == 0:
        store.remember("customer plan is Enterprise", ["billing"])
        store.remember('NEAR the * OR AND quote " marks')
    terms = set(query_terms(query))
    for hit in store.recall(query):
        assert hit.score > 0
        assert terms & set(tokenize(" ".join([hit.fact.text, *hit.fact.tags])))


# -- Unicode words -----------------------------------------------------------------------------


def test_words_of_any_script_are_searchable(store: FactStore) -> None:
    tokyo = store.remember("本社は東京にあります")  # no spaces between Japanese words
    zurich = store.remember("The team sits in Zürich")
    richmond = store.remember("The depot is in Richmond")
    hindi = store.remember("ग्राहक हिन्दी बोलता है")
    greek = store.remember("Η ΑΘΗΝΑ είναι πρωτεύουσα")
    seoul = store.remember("서울에서 회의가 있습니다")
    assert [h.fact for h in store.recall("東京")] == [tokyo]
    assert [h.fact for h in store.recall("東京の天気")] == [tokyo]
    assert [h.fact for h in store.recall("本")] == [tokyo]  # a lone character is a word too
    assert store.recall("京都") == []  # another city sharing one character
    assert [h.fact for h in store.recall("zürich")] == [zurich]
    assert [h.fact for h in store.recall("ZÜRICH")] == [zurich]
    assert [h.fact for h in store.recall("Zu\u0308rich")] == [zurich]  # decomposed form
    assert store.recall("rich") == []  # no fragment matches any more
    assert [h.fact for h in store.recall("richmond")] == [richmond]
    assert [h.fact for h in store.recall("हिन्दी")] == [hindi]  # combining signs stay inside
    assert [h.fact for h in store.recall("αθηνα")] == [greek]
    assert [h.fact for h in store.recall("서울")] == [seoul]
    acme = store.remember("ＡＣＭＥ signed the renewal")  # full-width letters fold to "acme"
    assert [h.fact for h in store.recall("Acme")] == [acme]


def test_forget_by_query_works_in_any_script(store: FactStore) -> None:
    tokyo = store.remember("本社は東京にあります")
    osaka = store.remember("支社は大阪にあります")
    assert store.forget("東京") == [tokyo]
    assert store.get(osaka.id) is not None and store.size() == 1


def test_the_tokenizer_folds_case_width_and_compatibility_forms() -> None:
    assert tokenize("Straße STRASSE ＡＢＣ ﬁne ①") == ["strasse", "strasse", "abc", "fine", "1"]
    assert tokenize("東京都") == ["東", "東京", "京", "京都", "都"]
    assert query_terms("東京都") == ["東京", "京都"]
    assert query_terms("x_y-z 42") == ["x", "y", "z", "42"]


@settings(max_examples=200)
@given(text=st.text(max_size=60))
def test_query_terms_are_always_among_the_indexed_tokens(text: str) -> None:
    assert set(query_terms(text, limit=None)) <= set(tokenize(text))
    for token in tokenize(text):
        assert token and token == token.strip()
        # Nothing FTS5's ascii tokenizer would split on or treat as syntax.
        assert all(ch.isalnum() or not ch.isascii() for ch in token), token


# Left out, as texts the store cannot hold (a separate defect, see the store's input checks): NUL
# (SQLite's length() stops at it, so "\x00…" fails the non-empty CHECK) and lone surrogates
# (not encodable as UTF-8).
_STORABLE = st.characters(exclude_categories=["Cs"], exclude_characters="\x00")


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(text=st.text(_STORABLE, min_size=1, max_size=40).filter(str.strip))
def test_a_fact_is_found_by_its_own_text(store: FactStore, text: str) -> None:
    fact = store.remember(text)
    if fact.quarantined is not None:  # invisible characters are held, never recalled
        assert fact.id not in {h.fact.id for h in store.recall(text, 50)}
    elif query_terms(text):
        assert fact.id in {h.fact.id for h in store.recall(text, 50)}
    store.forget(fact.id)
