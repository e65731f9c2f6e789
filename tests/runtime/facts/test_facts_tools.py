"""Remember / Recall / MemoryForget: schemas, validation, exact result texts, error results."""

from __future__ import annotations

import re
from typing import Any

import pytest

from specwire.ir.constants import TTL_MAX_DAYS
from specwire.ir.durations import HOUR_MS
from specwire.runtime.core.tool_types import Tool, ToolContext, ToolResult
from specwire.runtime.facts.inputs import MAX_TTL_DAYS, MIN_TTL_MS, RememberInput
from specwire.runtime.facts.model import Provenance
from specwire.runtime.facts.providers.protocol import LocalFactProvider
from specwire.runtime.facts.store import FactStore
from specwire.runtime.facts.tools import fact_tools

SESSION = "sess_00000000deadbeef"
CTX = ToolContext(session_id=SESSION, tool_use_id="tu_1")
DAY_MS = 86_400_000


@pytest.fixture
def tools(store: FactStore) -> dict[str, Tool]:
    return {
        tool.name: tool for tool in fact_tools(LocalFactProvider(store), ttl_ms=None, recall_k=5)
    }


WHY = {"justification": "the user asked for it"}


def call(tools: dict[str, Tool], name: str, **raw: Any) -> ToolResult:
    if name == "MemoryForget":
        raw = {**WHY, **raw}
    return tools[name].invoke(raw, CTX)


def test_names_order_and_flags(store: FactStore) -> None:
    remember, recall, read, forget = fact_tools(LocalFactProvider(store), ttl_ms=None, recall_k=5)
    names = [remember.name, recall.name, read.name, forget.name]
    assert names == ["Remember", "Recall", "MemoryRead", "MemoryForget"]
    assert remember.destructive and not remember.read_only and not remember.require_justification
    assert recall.read_only and not recall.destructive
    assert read.read_only and not read.destructive
    assert forget.destructive and forget.require_justification
    assert {t.scope for t in (remember, recall, read, forget)} == {"internal"}


def test_schemas_forbid_extra_fields_and_describe_every_field(tools: dict[str, Tool]) -> None:
    expected = {
        "Remember": ({"text", "tags", "ttlDays", "key"}, ["text"]),
        "Recall": ({"query", "k"}, ["query"]),
        "MemoryForget": ({"id", "query", "reason", "justification"}, ["justification"]),
    }
    for name, (fields, required) in expected.items():
        schema = tools[name].input_schema()
        assert schema["additionalProperties"] is False, name
        assert set(schema["properties"]) == fields, name
        assert schema.get("required", []) == required, name
        for field, spec in schema["properties"].items():
            assert spec.get("description"), f"{name}.{field} has no description"
    assert tools["MemoryForget"].input_schema()["properties"]["id"]["anyOf"][0]["pattern"] == (
        "^mem_[0-9a-f]{16}$"
    )


# -- Remember --------------------------------------------------------------------------------


def test_remember_result_text_and_provenance(tools: dict[str, Tool], store: FactStore) -> None:
    plain = call(tools, "Remember", text="Prefers metric units")
    match = re.fullmatch(r"remembered \((mem_[0-9a-f]{16})\): Prefers metric units", plain.text)
    assert not plain.is_error and match is not None
    got = store.get(match.group(1))
    assert got is not None and got.fact.provenance == Provenance(SESSION, ())
    assert SESSION not in plain.text  # provenance is never shown to the model

    tagged = call(tools, "Remember", text="On call this week", tags=["ops", "rota"], ttlDays=10)
    assert re.fullmatch(
        r"remembered \(mem_[0-9a-f]{16}\) \[ops, rota\] "
        r"\(expires 2026-07-11T12:00:00\.000Z\): On call this week",
        tagged.text,
    ), tagged.text


def test_remember_uses_the_spec_ttl_unless_the_model_sets_one(store: FactStore) -> None:
    remember = fact_tools(LocalFactProvider(store), ttl_ms=2 * DAY_MS, recall_k=5)[0]
    default = remember.invoke({"text": "two-day fact"}, CTX)
    assert "(expires 2026-07-03T12:00:00.000Z)" in default.text
    fractional = remember.invoke({"text": "half-day fact", "ttlDays": 0.5}, CTX)
    assert "(expires 2026-07-02T00:00:00.000Z)" in fractional.text


@pytest.mark.parametrize("days", [0.001, 0.04, 1 / 24 - 1e-7, -1, 0])
def test_ttl_days_below_one_hour_are_refused_with_a_clear_error(
    tools: dict[str, Tool], store: FactStore, days: float
) -> None:
    result = call(tools, "Remember", text="short-lived", ttlDays=days)
    assert result.is_error
    assert result.text.startswith("Remember: invalid input: ttlDays: must be at least 1 hour")
    assert store.size() == 0


@pytest.mark.parametrize(
    ("days", "expires"),
    [(1 / 24, "2026-07-01T13:00:00.000Z"), (3650, "2036-06-28T12:00:00.000Z")],
)
def test_ttl_days_from_one_hour_up_to_the_ceiling_are_accepted(
    tools: dict[str, Tool], days: float, expires: str
) -> None:
    result = call(tools, "Remember", text="bounded", ttlDays=days)
    assert not result.is_error and f"(expires {expires})" in result.text


def test_the_ttl_bounds_match_the_spec_language() -> None:
    assert MIN_TTL_MS == HOUR_MS
    assert MAX_TTL_DAYS == TTL_MAX_DAYS
    schema = RememberInput.model_json_schema()["properties"]["ttlDays"]["anyOf"][0]
    assert (schema["minimum"], schema["maximum"]) == (1 / 24, 3650)


@pytest.mark.parametrize(
    ("raw", "field"),
    [
        ({}, "text"),
        ({"text": ""}, "text"),
        ({"text": "x" * 2001}, "text"),
        ({"text": "ok", "tags": [""]}, "tags.0"),
        ({"text": "ok", "tags": [f"t{i}" for i in range(9)]}, "tags"),
        ({"text": "ok", "ttlDays": 0}, "ttlDays"),
        ({"text": "ok", "ttlDays": 0.001}, "ttlDays"),
        ({"text": "ok", "ttlDays": 3651}, "ttlDays"),
        ({"text": "ok", "ttlDays": "soon"}, "ttlDays"),
        ({"text": "ok", "priority": "high"}, "priority"),
    ],
)
def test_remember_input_errors_name_the_field(
    tools: dict[str, Tool], store: FactStore, raw: dict[str, Any], field: str
) -> None:
    result = tools["Remember"].invoke(raw, CTX)
    assert result.is_error
    assert result.text.startswith("Remember: invalid input: ")
    assert f"{field}: " in result.text
    assert store.size() == 0


def test_a_whitespace_only_text_is_a_store_refusal_not_a_crash(tools: dict[str, Tool]) -> None:
    result = call(tools, "Remember", text="   ")
    assert result.is_error and result.text == "Remember: a memory needs non-empty text"


# -- Recall ----------------------------------------------------------------------------------


def test_recall_result_text(tools: dict[str, Tool], store: FactStore) -> None:
    store.remember("lunch is at noon")
    store.remember("billing runs on the first", ["finance"])
    store.remember("customer plan is Enterprise", ["billing", "crm"])
    result = call(tools, "Recall", query="customer billing")
    assert not result.is_error
    header, *lines = result.text.split("\n")
    assert header == '2 memory match(es) for "customer billing" (relevance, best = 1.00):'
    source = r" — source mem_[0-9a-f]{16}"
    assert re.fullmatch(
        r"  • \(1\.00\) customer plan is Enterprise \[billing, crm\]" + source, lines[0]
    )
    # "billing" is in two of three facts: BM25 gives it almost no weight.
    assert re.fullmatch(
        r"  • \((<0\.01|0\.\d\d)\) billing runs on the first \[finance\]" + source, lines[1]
    )


def test_a_small_store_never_shows_zero_scores(tools: dict[str, Tool], store: FactStore) -> None:
    store.remember("the deploy target is Kubernetes")
    store.remember("the deploy window is Friday")
    result = call(tools, "Recall", query="deploy")
    assert "(0.00)" not in result.text
    assert result.text.count("(1.00)") == 2


def test_remembering_the_same_text_twice_keeps_one_fact(
    tools: dict[str, Tool], store: FactStore
) -> None:
    first = call(tools, "Remember", text="The billing plan is Enterprise")
    again = call(tools, "Remember", text="the  billing plan is enterprise")
    assert first.text.startswith("remembered (mem_")
    assert again.text.startswith("already remembered (mem_") and not again.is_error
    assert store.size() == 1


def test_recall_with_no_match_says_so(tools: dict[str, Tool], store: FactStore) -> None:
    store.remember("lunch is at noon")
    result = call(tools, "Recall", query="zebra crossing")
    assert (result.is_error, result.text) == (
        False,
        'no memories matched "zebra crossing"',
    )


def test_recall_k_defaults_to_the_spec_and_is_bounded(store: FactStore) -> None:
    for i in range(4):
        store.remember(f"release note {i}")
    recall = fact_tools(LocalFactProvider(store), ttl_ms=None, recall_k=2)[1]
    assert recall.invoke({"query": "release"}, CTX).text.startswith("2 memory match(es)")
    assert recall.invoke({"query": "release", "k": 3}, CTX).text.startswith("3 memory")
    for bad in (0, 51):
        result = recall.invoke({"query": "release", "k": bad}, CTX)
        assert result.is_error and "k: " in result.text
    empty = recall.invoke({"query": ""}, CTX)
    assert empty.is_error and "query: " in empty.text


# -- MemoryForget ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "raw", [{}, {"id": "mem_0123456789abcdef", "query": "x"}, {"reason": "tidy up"}]
)
def test_forget_needs_exactly_one_of_id_or_query(
    tools: dict[str, Tool], raw: dict[str, Any]
) -> None:
    result = tools["MemoryForget"].invoke({**WHY, **raw}, CTX)
    assert (result.is_error, result.text) == (
        True,
        "MemoryForget: provide exactly one of `id` or `query`.",
    )


@pytest.mark.parametrize(
    ("raw", "field"),
    [
        ({"id": "mem_XYZ"}, "id"),
        ({"query": ""}, "query"),
        ({"query": "x", "reason": ""}, "reason"),
        ({"query": "x", "reason": "r" * 501}, "reason"),
        ({"query": "x", "justification": ""}, "justification"),
        ({"query": "x", "because": "why not"}, "because"),
    ],
)
def test_forget_input_errors_name_the_field(
    tools: dict[str, Tool], raw: dict[str, Any], field: str
) -> None:
    result = tools["MemoryForget"].invoke({**WHY, **raw}, CTX)
    assert result.is_error and f"{field}: " in result.text


def test_forget_by_id_forgets_that_memory_only(tools: dict[str, Tool], store: FactStore) -> None:
    target = store.remember("printer on floor 3 is broken")
    twin = store.remember("printer on floor 3 is broken")
    result = call(tools, "MemoryForget", id=target.id, reason="fixed  now")
    assert result.text == (
        f"forgot 1 memory(ies) — fixed now:\n  • ({target.id}) printer on floor 3 is broken"
    )
    assert store.size() == 1 and store.find_same_text(twin.text) == twin
    again = call(tools, "MemoryForget", id=target.id)
    assert again.text == f"nothing to forget — no live memory matched id {target.id}"


def test_forget_by_query_lists_what_was_forgotten(tools: dict[str, Tool], store: FactStore) -> None:
    a = store.remember("printer on floor 3 is broken")
    b = store.remember("the printer needs toner")
    store.remember("lunch is at noon")
    result = call(tools, "MemoryForget", query="printer")
    header, *lines = result.text.split("\n")
    assert header == "forgot 2 memory(ies) — the user asked for it:"
    assert sorted(lines) == sorted(
        [f"  • ({a.id}) printer on floor 3 is broken", f"  • ({b.id}) the printer needs toner"]
    )
    nothing = call(tools, "MemoryForget", query="printer")
    assert nothing.text == 'nothing to forget — no live memory matched "printer"'


def test_forget_by_query_forgets_only_memories_with_every_word(
    tools: dict[str, Tool], store: FactStore
) -> None:
    billing = store.remember("the customer's billing plan is Enterprise")
    store.remember("our project plan is due Friday")
    result = call(tools, "MemoryForget", query="billing plan")
    assert result.text == (
        f"forgot 1 memory(ies) — the user asked for it:\n  • ({billing.id}) {billing.text}"
    )
    assert store.size() == 1
    forget = tools["MemoryForget"]
    assert "all of the query's words" in forget.description
    query_help = forget.input_schema()["properties"]["query"]["description"]
    assert "all of these words" in query_help


def test_the_justification_is_accepted_and_recorded_when_no_reason_is_given(
    tools: dict[str, Tool], store: FactStore
) -> None:
    fact = store.remember("temporary door code 4711")
    result = call(tools, "MemoryForget", query="door code", justification="user asked to")
    assert result.text == f"forgot 1 memory(ies) — user asked to:\n  • ({fact.id}) {fact.text}"
    got = store.get(fact.id)
    assert got is not None and got.tombstone is not None
    assert (got.status, got.tombstone.reason) == ("forgotten", "user asked to")
    other = store.remember("old door code 1234")
    both = call(tools, "MemoryForget", id=other.id, reason="rotated", justification="cleanup")
    assert both.text.startswith("forgot 1 memory(ies) — rotated:")


def test_forget_without_a_justification_is_refused_and_changes_nothing(
    tools: dict[str, Tool], store: FactStore
) -> None:
    store.remember("printer on floor 3 is broken")
    for raw in ({"query": "printer"}, {"query": "printer", "justification": "   "}):
        result = tools["MemoryForget"].invoke(raw, CTX)
        assert result.is_error and "justification" in result.text
    assert store.size() == 1


# -- store failures become error results ----------------------------------------------------


def test_store_errors_become_error_results(tools: dict[str, Tool], store: FactStore) -> None:
    store.close()
    for name, raw in (
        ("Remember", {"text": "x"}),
        ("Recall", {"query": "x"}),
        ("MemoryForget", {"query": "x", **WHY}),
        ("MemoryForget", {"id": "mem_0123456789abcdef", **WHY}),
    ):
        result = tools[name].invoke(raw, CTX)
        assert result.is_error, name
        assert result.text.startswith(f"{name}: the fact store is closed"), result.text


@pytest.mark.parametrize("text", ["\x00starts with NUL", "lone \ud800 surrogate"])
def test_text_the_store_cannot_keep_is_an_input_error(
    tools: dict[str, Tool], store: FactStore, text: str
) -> None:
    for raw in ({"text": text}, {"text": "fine", "tags": [text]}):
        result = tools["Remember"].invoke(raw, CTX)
        assert result.is_error and "invalid input" in result.text and "internal" not in result.text
    assert store.size() == 0


def test_a_query_matching_too_many_memories_forgets_nothing(
    tools: dict[str, Tool], store: FactStore
) -> None:
    for n in range(11):
        store.remember(f"billing note number {n}")
    result = call(tools, "MemoryForget", query="billing")
    assert result.is_error
    assert (
        "matches 11 memories, more than 10" in result.text
        and "Nothing was forgotten" in result.text
    )
    assert store.size() == 11
    narrowed = call(tools, "MemoryForget", query="billing note 7")
    assert narrowed.text.startswith("forgot 1 memory(ies)")
    assert store.size() == 10
