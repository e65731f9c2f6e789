"""Remem's conformance themes, each as cases over the provider protocol.

Stable provenance, scope filtering (with ``types``), abort and timeout (``RecallRequest.deadline``
and ``cancel``), bounded outputs (``max_tokens``, ``catalog(limit)``), malformed data (requests
and queries), duplicate ids, content-safe health. Optional protocols (``DescribedProvider``,
``CatalogProvider``, ``FactReader``, the owner's ``FactLister``) are checked where the provider
offers them.
"""

from __future__ import annotations

import contextlib
import inspect
import threading
import time
from typing import Any

from specwire.runtime.core.errors import StoreError
from specwire.runtime.core.ids import MEMORY_ID_RE
from specwire.runtime.facts.conformance.case import Case
from specwire.runtime.facts.conformance.checks import answered, raises, skip
from specwire.runtime.facts.conformance.target import TENANTS, capable, need
from specwire.runtime.facts.model import InvalidRequestError, Provenance
from specwire.runtime.facts.providers.admin import FactLister
from specwire.runtime.facts.providers.protocol import (
    CatalogProvider,
    DeadlineExceeded,
    DescribedProvider,
    FactProvider,
    FactReader,
    ForgetRequest,
    ProviderHit,
    ReadRequest,
    RecallRequest,
    RetainRequest,
)
from specwire.runtime.facts.text import fingerprint

A, B = TENANTS
SPEC = "themes-bot"
# Bytes a token stands for in ``RecallRequest.max_tokens`` (the protocol's docstring).
BYTES_PER_TOKEN = 4
# A health message is one short line: a reason, never a dump.
MAX_HEALTH_MESSAGE_CHARS = 500


def hits_of(provider: FactProvider, query: str, limit: int = 20, **fields: Any) -> list[Any]:
    return list(provider.recall(RecallRequest(query, limit, **fields)).hits)


def shape(hit: ProviderHit) -> tuple[str, str, tuple[str, ...], bool]:
    return (hit.id, hit.text, hit.tags, hit.evidence_backed)


# -- stable provenance ---------------------------------------------------------------------------


def provenance_is_stable_across_reads(target: Any) -> None:
    """ids, texts, tags and evidence come back the same from recall, point reads and listings"""
    provider = target.provider(A, SPEC)
    caps = provider.capabilities()
    backed = provider.retain(
        RetainRequest(
            "the quarterly audit is owned by Priya",
            ("audit",),
            provenance=Provenance("sess_00000000000000aa", ("tu_audit_1",)),
        )
    )
    unbacked = provider.retain(RetainRequest("the quarterly audit room is B12", ("audit",)))
    first = [shape(hit) for hit in hits_of(provider, "quarterly audit")]
    for n in range(5):
        provider.retain(RetainRequest(f"an unrelated note number {n} about parking"))
    again = [shape(hit) for hit in hits_of(provider, "quarterly audit")]
    assert again == first, "the same recall answered other facts after unrelated writes"
    by_id = {hit[0]: hit for hit in first}
    assert set(by_id) == {backed.id, unbacked.id}
    assert by_id[backed.id][1:3] == ("the quarterly audit is owned by Priya", ("audit",))
    if caps.provenance:
        assert by_id[backed.id][3] is True and by_id[unbacked.id][3] is False
    if isinstance(provider, FactReader) and caps.point_read:
        [record] = provider.read(ReadRequest(id=backed.id)).records
        assert (record.id, record.text, record.tags, record.evidence_backed) == by_id[backed.id]
    if isinstance(provider, FactLister):
        status = provider.get_fact(backed.id)
        assert status is not None and status.fact.text == by_id[backed.id][1]
        assert status.fact.provenance == Provenance("sess_00000000000000aa", ("tu_audit_1",))


def hits_name_their_provider_and_fingerprint_truthfully(target: Any) -> None:
    """a hit's ``provider`` is the descriptor's id and its ``fingerprint`` its text's, when set"""
    provider = target.provider(A, SPEC)
    provider.retain(RetainRequest("Ünïcode  Café opens at NINE"))
    hits = hits_of(provider, "café opens")
    assert hits, "a fact just written was not recalled"
    described = provider.descriptor() if isinstance(provider, DescribedProvider) else None
    for hit in hits:
        if hit.provider is not None:
            assert described is not None, "a hit names a provider, but it has no descriptor()"
            assert hit.provider == described.id
        if hit.fingerprint is not None:
            assert hit.fingerprint == fingerprint(hit.text)
        assert all(isinstance(reason, str) and reason for reason in hit.reasons)
    if described is not None:
        assert described.id and described.kind


def a_superseded_id_is_never_recalled_again(target: Any) -> None:
    """a supersede gives a new id; the old one is gone from recall and point reads"""
    provider = target.provider(A, SPEC)
    caps = capable(target, provider, "supersede")
    old = provider.retain(RetainRequest("the wifi password rotates monthly"))
    new = provider.retain(RetainRequest("the wifi password rotates weekly", supersedes=old.id))
    assert new.id != old.id and new.superseded == old.id
    assert [hit.id for hit in hits_of(provider, "wifi password rotates")] == [new.id]
    if isinstance(provider, FactReader) and caps.point_read:
        assert provider.read(ReadRequest(id=old.id)).records == ()


# -- scope filtering -----------------------------------------------------------------------------


def a_types_filter_returns_only_those_types(target: Any) -> None:
    """a recall asking for types returns no hit of another type"""
    provider = target.provider(A, SPEC)
    provider.retain(RetainRequest("the design decision was to use queues"))
    for types in (("decision",), ("procedure", "preference")):
        hits = hits_of(provider, "design decision queues", types=types)
        assert all(hit.type in types for hit in hits), [hit.type for hit in hits]
    assert hits_of(provider, "design decision queues"), "without types the fact is recalled"


def another_tenants_exact_text_finds_nothing(target: Any) -> None:
    """a query equal to another tenant's fact finds, reads and forgets nothing of it"""
    mine, theirs = target.provider(A, SPEC), target.provider(B, SPEC)
    secret = mine.retain(RetainRequest("the vault combination is 31-07-1999"))
    for query in ("the vault combination is 31-07-1999", "vault", "31-07-1999"):
        assert hits_of(theirs, query) == []
    if theirs.capabilities().point_read and isinstance(theirs, FactReader):
        assert theirs.read(ReadRequest(id=secret.id)).records == ()
    assert theirs.forget(ForgetRequest(id=secret.id)).removed == 0
    assert [hit.id for hit in hits_of(mine, "vault combination")] == [secret.id]


# -- abort and timeout ---------------------------------------------------------------------------


def a_recall_past_its_deadline_or_cancelled_gives_up(target: Any) -> None:
    """an expired deadline or a set cancel raises DeadlineExceeded, never an empty answer"""
    provider = target.provider(A, SPEC)
    provider.retain(RetainRequest("the backup runs at midnight"))
    with raises(DeadlineExceeded):
        provider.recall(RecallRequest("backup midnight", 5, deadline=time.monotonic() - 1))
    cancelled = threading.Event()
    cancelled.set()
    with raises(DeadlineExceeded):
        provider.recall(RecallRequest("backup midnight", 5, cancel=cancelled))
    # A deadline still ahead and a cancel nobody set change nothing.
    ahead = RecallRequest(
        "backup midnight", 5, deadline=time.monotonic() + 60, cancel=threading.Event()
    )
    assert [hit.text for hit in provider.recall(ahead).hits] == ["the backup runs at midnight"]


def a_stalled_recall_returns_by_its_deadline(target: Any) -> None:
    """a recall on a hanging backend returns or fails by its deadline, while the stall holds"""
    provider = need(target, "stalled", A, SPEC)
    still_stalled = getattr(target, "still_stalled", lambda: True)
    request = RecallRequest("anything", 5, deadline=time.monotonic() + 0.5)
    with contextlib.suppress(StoreError):  # gave up: DeadlineExceeded, or its own timeout
        answered(lambda: provider.recall(request))
    assert still_stalled(), "the recall returned only once the stall had ended"


# -- bounded outputs -----------------------------------------------------------------------------


def a_recall_stays_within_its_token_budget(target: Any) -> None:
    """max_tokens keeps the best hits whose texts fit the budget, in rank order"""
    provider = target.provider(A, SPEC)
    for n in range(10):
        filler = " ".join(f"word{n}x{m}" for m in range(18))
        provider.retain(RetainRequest(f"lighthouse keeper log entry {n}: {filler}"))
    unbounded = hits_of(provider, "lighthouse keeper log", 10)
    assert len(unbounded) == 10
    for max_tokens in (60, 100, 250):
        bounded = hits_of(provider, "lighthouse keeper log", 10, max_tokens=max_tokens)
        size = sum(len(hit.text.encode("utf-8")) for hit in bounded)
        assert size <= max_tokens * BYTES_PER_TOKEN, (max_tokens, size)
        ids = [hit.id for hit in unbounded]
        assert [hit.id for hit in bounded] == [i for i in ids if i in {h.id for h in bounded}]
        best = len(unbounded[0].text.encode("utf-8"))
        if best <= max_tokens * BYTES_PER_TOKEN:
            assert bounded, f"nothing returned although the best hit fits {max_tokens} tokens"


def the_catalog_stays_within_its_limit(target: Any) -> None:
    """catalog(limit) enumerates at most limit entries, without content beyond titles"""
    provider = target.provider(A, SPEC)
    capable(target, provider, "catalog")
    for n in range(6):
        provider.retain(RetainRequest(f"catalogued fact {n}"))
    if not isinstance(provider, CatalogProvider):
        raise AssertionError("the provider declares `catalog` but has no catalog() method")
    for limit in (1, 3):
        entries = provider.catalog(limit)
        assert len(entries) <= limit
        assert all(entry.id and isinstance(entry.title, str) for entry in entries)


# -- malformed data ------------------------------------------------------------------------------


def malformed_writes_are_refused_and_change_nothing(target: Any) -> None:
    """empty, NUL, lone-surrogate or non-text writes and bad tags or TTLs are refused"""
    provider = target.provider(A, SPEC)
    malformed: list[dict[str, Any]] = [
        {"text": ""},
        {"text": "   \n\t "},
        {"text": "nul \x00 inside"},
        {"text": "lone surrogate \ud800 inside"},
        {"text": 12345},
        {"text": "fine", "tags": ("",)},
        {"text": "fine", "tags": ("t" * 65,)},
        {"text": "fine", "ttl_ms": 0},
        {"text": "fine", "ttl_ms": -1},
    ]
    for fields in malformed:
        with raises(InvalidRequestError):
            provider.retain(RetainRequest(**fields))
    assert hits_of(provider, "fine inside surrogate nul") == []
    provider.retain(RetainRequest("the store still works after refusals"))
    assert [hit.text for hit in hits_of(provider, "store still works")] == [
        "the store still works after refusals"
    ]


def hostile_queries_are_data_not_syntax(target: Any) -> None:
    """query operators, SQL and control characters are searched for, never executed"""
    provider = target.provider(A, SPEC)
    fact = provider.retain(RetainRequest("the release train leaves on Thursday"))
    for query in (
        "'; DROP TABLE facts; --",
        '"release" OR * AND NOT train NEAR(a b)',
        "release:* & !train | (leaves <-> thursday)",
        "?!*%_\\",
        "\u202e\u200b\u2066 release",
        "release " * 400,
    ):
        try:
            hits = provider.recall(RecallRequest(query, 5)).hits
        except InvalidRequestError:
            continue  # a query the provider refuses at its boundary, with a clear message
        assert all(hit.id == fact.id for hit in hits)
    assert [hit.id for hit in hits_of(provider, "release train")] == [fact.id]


def malformed_requests_are_refused_before_any_provider_sees_them(target: Any) -> None:
    """the protocol's request types refuse bad limits, budgets, ids and selectors"""
    provider = target.provider(A, SPEC)
    for build in (
        lambda: RecallRequest("x", 0),
        lambda: RecallRequest("x", True),
        lambda: RecallRequest("x", 5, max_tokens=0),
        lambda: ForgetRequest(),
        lambda: ForgetRequest(id="mem_0000000000000001", query="x"),
        lambda: ForgetRequest(id="../../etc/passwd"),
        lambda: ReadRequest(id="mem_0000000000000001", key="k"),
        lambda: RetainRequest("x", supersedes="not-an-id"),
    ):
        with raises(InvalidRequestError):
            build()
    assert hits_of(provider, "x") == []


# -- duplicate ids -------------------------------------------------------------------------------


def ids_are_unique_and_never_reused(target: Any) -> None:
    """every write gets a fresh well-formed id; a forgotten id is never handed out again"""
    provider = target.provider(A, SPEC)
    ids = [provider.retain(RetainRequest(f"ledger line {n} balances")).id for n in range(40)]
    assert len(set(ids)) == len(ids)
    assert all(MEMORY_ID_RE.match(fact_id) for fact_id in ids)
    assert provider.forget(ForgetRequest(id=ids[0])).removed == 1
    assert provider.forget(ForgetRequest(id=ids[0])).removed == 0
    again = provider.retain(RetainRequest("ledger line 0 balances"))
    assert again.id not in ids


def a_second_supersede_of_one_fact_is_refused(target: Any) -> None:
    """superseding an already superseded fact is refused, leaving one live successor"""
    provider = target.provider(A, SPEC)
    capable(target, provider, "supersede")
    old = provider.retain(RetainRequest("the mascot is a heron"))
    first = provider.retain(RetainRequest("the mascot is an otter", supersedes=old.id))
    with raises(StoreError):
        provider.retain(RetainRequest("the mascot is a lynx", supersedes=old.id))
    assert [hit.id for hit in hits_of(provider, "mascot")] == [first.id]


def a_reused_operation_id_with_another_write_is_refused(target: Any) -> None:
    """an operation id replays its own write and refuses a different one"""
    provider = target.provider(A, SPEC)
    if "operation_id" not in inspect.signature(provider.retain).parameters:
        skip("the provider takes no operation ids (in-process calls are never retried)")
    first = provider.retain(RetainRequest("the printer is on floor 3"), operation_id="op-dup-1")
    with raises(StoreError):
        provider.retain(RetainRequest("the printer is on floor 4"), operation_id="op-dup-1")
    assert [hit.id for hit in hits_of(provider, "printer floor")] == [first.id]


# -- content-safe health -------------------------------------------------------------------------


def health_and_errors_carry_no_content_or_credentials(target: Any) -> None:
    """health messages, errors and descriptors hold no memory text and no secret"""
    provider = target.provider(A, SPEC)
    canary = "canary-5c1f the launch code is tangerine-owl"
    provider.retain(RetainRequest(canary))
    forbidden = [canary, "tangerine-owl", *getattr(target, "secrets", ())]
    said: list[str] = []
    health = provider.health()
    assert health.ok and health.message is None and health.checked_at.tzinfo is not None
    said.append(repr(provider))
    if isinstance(provider, DescribedProvider):
        said.append(repr(provider.descriptor()))
    for hook in ("degraded", "stalled"):
        broken = getattr(target, hook, None)
        made = broken(A, SPEC) if callable(broken) else None
        if made is None:
            continue
        health = answered(made.health)
        assert health.ok is False and health.message, f"{hook}: health said {health!r}"
        assert len(health.message) <= MAX_HEALTH_MESSAGE_CHARS and "\n" not in health.message
        said.append(health.message)
        if hook == "degraded":
            try:
                made.recall(RecallRequest("launch code", 5))
            except StoreError as exc:
                said.append(str(exc))
            else:
                raise AssertionError("a degraded backend answered a recall as if it worked")
    for text in said:
        assert "Traceback" not in text
        for secret in forbidden:
            assert secret not in text, f"{secret!r} appears in {text!r}"


CASES = (
    Case(provenance_is_stable_across_reads, ("remem:stable_provenance",)),
    Case(hits_name_their_provider_and_fingerprint_truthfully, ("remem:stable_provenance",)),
    Case(a_superseded_id_is_never_recalled_again, ("remem:stable_provenance",)),
    Case(a_types_filter_returns_only_those_types, ("remem:scope_filtering",)),
    Case(another_tenants_exact_text_finds_nothing, ("remem:scope_filtering",)),
    Case(a_recall_past_its_deadline_or_cancelled_gives_up, ("remem:abort_and_timeout",)),
    Case(
        a_stalled_recall_returns_by_its_deadline,
        ("remem:abort_and_timeout", "crewship:provider_timeout"),
    ),
    Case(a_recall_stays_within_its_token_budget, ("remem:bounded_outputs",)),
    Case(the_catalog_stays_within_its_limit, ("remem:bounded_outputs",)),
    Case(malformed_writes_are_refused_and_change_nothing, ("remem:malformed_data",)),
    Case(hostile_queries_are_data_not_syntax, ("remem:malformed_data",)),
    Case(malformed_requests_are_refused_before_any_provider_sees_them, ("remem:malformed_data",)),
    Case(ids_are_unique_and_never_reused, ("remem:duplicate_ids",)),
    Case(a_second_supersede_of_one_fact_is_refused, ("remem:duplicate_ids",)),
    Case(a_reused_operation_id_with_another_write_is_refused, ("remem:duplicate_ids",)),
    Case(
        health_and_errors_carry_no_content_or_credentials,
        ("remem:content_safe_health", "crewship:health_degraded"),
    ),
)
