"""wire_facts: defaults, seam shape, capture hook, log lines, backend refusal."""

from __future__ import annotations

from pathlib import Path

import pytest
from facts_support import ConceptEmbedder, FakeClock

from specwire.runtime.core.errors import MemoryServiceError
from specwire.runtime.core.fragment import MemoryFactsFragment
from specwire.runtime.core.paths import StoreLayout
from specwire.runtime.core.tool_types import ToolContext
from specwire.runtime.facts.providers.protocol import LocalFactProvider
from specwire.runtime.facts.wiring import FactsWiring, wire_facts
from specwire.runtime.sessions.log import SessionLog

SESSION = "sess_0123456789abcdef"
WIRED_DEFAULT = (
    "[memory] Remember/Recall/MemoryRead/MemoryForget wired (autoRecall=true, autoCapture=false)\n"
)


def wire(
    tmp_path: Path, clock: FakeClock, **knobs: object
) -> tuple[FactsWiring, list[str], StoreLayout]:
    layout = StoreLayout(tmp_path / ".specwire", "support-bot")
    lines: list[str] = []
    wiring = wire_facts(
        MemoryFactsFragment.model_validate(knobs),
        layout,
        sessions_dir=layout.sessions_dir,
        now=clock,
        log=lines.append,
    )
    return wiring, lines, layout


def test_a_bare_memory_block_gets_the_runtime_defaults(tmp_path: Path, clock: FakeClock) -> None:
    wiring, lines, layout = wire(tmp_path, clock)
    try:
        assert [t.name for t in wiring.tools] == [
            "Remember",
            "Recall",
            "MemoryRead",
            "MemoryForget",
        ]
        assert wiring.store.path == layout.facts_db
        assert layout.facts_db.name == "support-bot.sqlite3"
        assert not layout.facts_db.exists()  # created by the first write
        assert isinstance(wiring.provider, LocalFactProvider)
        assert wiring.provider.store is wiring.store
        seam = wiring.seam
        assert (seam.auto_recall, seam.recall_k, seam.auto_capture) == (True, 5, False)
        assert seam.recall is not None and seam.on_capture is None
        assert seam.capture_threshold == 1
        assert lines == [WIRED_DEFAULT]
    finally:
        wiring.store.close()


def test_the_recall_seam_returns_fact_texts_best_first(tmp_path: Path, clock: FakeClock) -> None:
    wiring, _, _ = wire(tmp_path, clock, recall_k=2)
    try:
        wiring.store.remember("the customer's billing plan is Enterprise")
        wiring.store.remember("lunch is at noon")
        assert wiring.seam.recall_k == 2
        assert wiring.seam.recall is not None
        seed = "You are a support engineer for the Acme billing product."
        assert wiring.seam.recall(seed, 2) == ["the customer's billing plan is Enterprise"]
    finally:
        wiring.store.close()


def test_recall_off_and_capture_on_shape_the_seam(tmp_path: Path, clock: FakeClock) -> None:
    wiring, lines, layout = wire(
        tmp_path, clock, auto_recall=False, auto_capture=True, auto_capture_threshold=2
    )
    try:
        seam = wiring.seam
        assert seam.recall is None and seam.auto_recall is False
        assert seam.auto_capture and seam.capture_threshold == 2 and seam.on_capture is not None
        assert lines == [
            "[memory] Remember/Recall/MemoryRead/MemoryForget wired "
            "(autoRecall=false, autoCapture=true)\n"
        ]
        log = SessionLog(layout.sessions_dir, SESSION, now=clock)
        for turn, answer in enumerate(["Deploy window is 9-11 UTC.", "Use the blue cluster."]):
            log.append("user_message", {"text": "q", "turn": turn + 1})
            log.append("assistant_message", {"text": answer, "turn": turn + 1})

        assert seam.on_capture(1, SESSION) == 0  # below the threshold
        assert len(lines) == 1
        assert seam.on_capture(2, SESSION) == 2
        assert lines[-1] == (f"[memory] auto-captured 2 durable fact(s) into {layout.facts_db}\n")
        assert seam.on_capture(2, SESSION) == 0  # idempotent, and no log line for zero
        assert len(lines) == 2
        texts = [entry.fact.text for entry in wiring.store.list_facts()]
        assert texts == ["Deploy window is 9-11 UTC.", "Use the blue cluster."]
    finally:
        wiring.store.close()


def test_a_failed_capture_is_logged_not_raised(tmp_path: Path, clock: FakeClock) -> None:
    wiring, lines, layout = wire(tmp_path, clock, auto_capture=True)
    log = SessionLog(layout.sessions_dir, SESSION, now=clock)
    log.append("user_message", {"text": "q", "turn": 1})
    log.append("assistant_message", {"text": "A durable answer.", "turn": 1})
    wiring.store.close()
    assert wiring.seam.on_capture is not None
    assert wiring.seam.on_capture(1, SESSION) == 0
    assert lines[-1] == (
        "[memory] auto-capture skipped: the fact store is closed (support-bot.sqlite3)\n"
    )
    assert wiring.seam.on_capture(1, "../escape") == 0
    assert lines[-1].startswith("[memory] auto-capture skipped: not a session id")


def test_the_spec_ttl_reaches_the_remember_tool(tmp_path: Path, clock: FakeClock) -> None:
    wiring, _, _ = wire(tmp_path, clock, ttl_ms=86_400_000)
    try:
        ctx = ToolContext(session_id=SESSION, tool_use_id="tu_1")
        result = wiring.tools[0].invoke({"text": "temporary"}, ctx)
        assert "(expires 2026-07-02T12:00:00.000Z)" in result.text
    finally:
        wiring.store.close()


def test_a_declared_embedder_wires_hybrid_recall(tmp_path: Path, clock: FakeClock) -> None:
    wiring, lines, _ = wire(tmp_path, clock, embedder="hash/256")
    try:
        assert lines[0] == "[memory] hybrid recall wired: BM25 + cosine (hash/256, RRF k=60)\n"
        assert lines[1] == WIRED_DEFAULT
        wiring.store.remember("the deploy target is Kubernetes")
        # No shared word (BM25 finds nothing); shared fragments "dep", "epl", "plo", "loy".
        assert [hit.fact.text for hit in wiring.store.recall("deployments")] == [
            "the deploy target is Kubernetes"
        ]
    finally:
        wiring.store.close()


def test_a_ready_embedder_from_the_deps_wins_over_the_spec_name(
    tmp_path: Path, clock: FakeClock
) -> None:
    layout = StoreLayout(tmp_path / ".specwire", "support-bot")
    lines: list[str] = []
    wiring = wire_facts(
        MemoryFactsFragment.model_validate({"embedder": "hash/256"}),
        layout,
        sessions_dir=layout.sessions_dir,
        now=clock,
        log=lines.append,
        embedder=ConceptEmbedder(),
    )
    try:
        assert lines[0] == "[memory] hybrid recall wired: BM25 + cosine (test/concepts, RRF k=60)\n"
        wiring.store.remember("the deploy target is Kubernetes")
        recall = wiring.seam.recall
        assert recall is not None
        assert recall("container orchestration", 5) == ["the deploy target is Kubernetes"]
    finally:
        wiring.store.close()


def test_an_embedder_that_cannot_load_fails_the_wiring_in_one_line(
    tmp_path: Path, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(MemoryServiceError) as refused:
        wire(tmp_path, clock, embedder="openai/text-embedding-3-small")
    assert str(refused.value) == (
        "memory.embedder: openai/text-embedding-3-small needs an API key: set OPENAI_API_KEY"
    )


def test_the_file_backend_is_accepted_by_name(tmp_path: Path, clock: FakeClock) -> None:
    wiring, _, _ = wire(tmp_path, clock, backend="file")
    assert [tool.name for tool in wiring.tools] == [
        "Remember",
        "Recall",
        "MemoryRead",
        "MemoryForget",
    ]
    wiring.store.close()


def test_an_unknown_backend_is_refused_before_anything_is_created(
    tmp_path: Path, clock: FakeClock
) -> None:
    with pytest.raises(
        MemoryServiceError,
        match=r'unknown memory backend "pgvector" \(known: file, http, postgres\)',
    ):
        wire(tmp_path, clock, backend="pgvector")
    assert not (tmp_path / ".specwire").exists()


def test_a_store_that_cannot_open_fails_wiring_with_a_memory_service_error(
    tmp_path: Path, clock: FakeClock
) -> None:
    (tmp_path / ".specwire").mkdir()
    (tmp_path / ".specwire" / "facts").write_text("in the way")
    with pytest.raises(
        MemoryServiceError, match=r"cannot create the fact store at .*: .*facts is not a directory"
    ):
        wire(tmp_path, clock)


def test_wiring_and_reading_create_nothing_until_remember(tmp_path: Path, clock: FakeClock) -> None:
    wiring, _, layout = wire(tmp_path, clock, auto_capture=True)
    try:
        remember, recall, read, forget = wiring.tools
        ctx = ToolContext(session_id=SESSION, tool_use_id="tu_1")
        assert wiring.seam.recall is not None and wiring.seam.recall("billing plan", 5) == []
        assert recall.invoke({"query": "billing"}, ctx).text == ('no memories matched "billing"')
        assert read.invoke({"key": "plan"}, ctx).text == "no live memory with key 'plan'"
        nothing = forget.invoke({"query": "billing", "justification": "asked"}, ctx)
        assert nothing.text == 'nothing to forget — no live memory matched "billing"'
        assert wiring.provider.health().ok
        assert wiring.seam.on_capture is not None and wiring.seam.on_capture(1, SESSION) == 0
        assert list(tmp_path.iterdir()) == []
        assert not remember.invoke({"text": "billing plan is Enterprise"}, ctx).is_error
        assert layout.facts_db.is_file()
        assert wiring.seam.recall("billing plan", 5) == ["billing plan is Enterprise"]
    finally:
        wiring.store.close()
