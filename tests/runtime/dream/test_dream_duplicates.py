"""Near-duplicate facts: the definition, and which fact survives."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from specwire.runtime.dream.duplicates import group_duplicates, jaccard, near_duplicates, token_set
from specwire.runtime.dream.settings import NEAR_DUPLICATE_JACCARD
from specwire.runtime.facts.model import Fact, Provenance

NATO = [
    "alfa",
    "bravo",
    "charlie",
    "delta",
    "echo",
    "foxtrot",
    "golf",
    "hotel",
    "india",
    "juliett",
    "kilo",
    "lima",
    "mike",
    "november",
    "oscar",
    "papa",
    "quebec",
    "romeo",
    "sierra",
    "tango",
    "uniform",
    "victor",
    "whiskey",
]
T0 = datetime(2026, 1, 1, tzinfo=UTC)


def fact(n: int, text: str, *, evidence: tuple[str, ...] = (), age_s: int = 0) -> Fact:
    return Fact(
        id=f"mem_{n:016x}",
        text=text,
        tags=(),
        created_at=T0 + timedelta(seconds=n - age_s),
        expires_at=None,
        superseded_by=None,
        provenance=Provenance("sess_0123456789abcdef", evidence),
    )


def dup(a: str, b: str) -> bool:
    return near_duplicates(fact(1, a), fact(2, b), NEAR_DUPLICATE_JACCARD)


def test_equal_normalized_text_is_a_duplicate() -> None:
    assert dup("The deploy target is  Fly.io", "the deploy target is fly.io")


def test_token_set_jaccard_at_the_threshold() -> None:
    a = "the customer prefers paper invoices sent by email at the end of each calendar month"
    b = "the customer prefers paper invoices sent by email at the end of every calendar month"
    ja = jaccard(token_set(a), token_set(b))
    assert ja >= NEAR_DUPLICATE_JACCARD
    assert dup(a, b)
    assert not dup("the customer prefers email", "the customer prefers phone calls")


def test_a_different_number_is_never_a_duplicate() -> None:
    a = "the staging database listens on port 5432 behind the vpn gateway in the eu region"
    b = "the staging database listens on port 5433 behind the vpn gateway in the eu region"
    assert jaccard(token_set(a), token_set(b)) >= NEAR_DUPLICATE_JACCARD
    assert not dup(a, b)


def test_a_negation_is_never_a_duplicate() -> None:
    a = "single sign on is enabled for the admin console of the billing service in production"
    b = "single sign on is not enabled for the admin console of the billing service in production"
    assert jaccard(token_set(a), token_set(b)) >= NEAR_DUPLICATE_JACCARD
    assert not dup(a, b)
    assert not dup(a, a.replace("is enabled", "isn't enabled"))


def test_survivor_is_the_evidence_backed_one_then_the_oldest() -> None:
    older = fact(1, "Deploys go out on Fridays")
    proven = fact(2, "deploys go out on fridays", evidence=("tu_1",))
    newer = fact(3, "DEPLOYS go out on Fridays")
    [group] = group_duplicates([newer, older, proven], NEAR_DUPLICATE_JACCARD)
    assert group.survivor == proven
    assert group.duplicates == (older, newer)
    [group] = group_duplicates([newer, older], NEAR_DUPLICATE_JACCARD)
    assert group.survivor == older


def test_no_chaining_every_duplicate_is_similar_to_its_own_survivor() -> None:
    words = NATO[:20]
    a = fact(1, " ".join(words))
    b = fact(2, " ".join([*words[:19], "xray"]))  # one word from a
    c = fact(3, " ".join([*words[:16], "xray", "yankee", "zulu", "zero"]))  # near b, not a
    assert near_duplicates(b, c, 0.7) and not near_duplicates(a, c, 0.7)
    groups = group_duplicates([a, b, c], 0.7)
    assert [(g.survivor, g.duplicates) for g in groups] == [(a, (b,))]


def test_unrelated_facts_make_no_group() -> None:
    facts = [fact(i, text) for i, text in enumerate(["alpha beta", "gamma delta", "x"], 1)]
    assert group_duplicates(facts, NEAR_DUPLICATE_JACCARD) == []
