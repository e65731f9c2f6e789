"""Per-turn recall (``memory.autoRecall: per-turn``, ``refreshEvery``): the recalled block follows
the conversation's topic, replaces the previous one, and never grows past ``recallK`` lines."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from loop_support import new_log, payloads

from specwire.runtime.core.errors import RecallUnavailableError
from specwire.runtime.core.ids import new_session_id
from specwire.runtime.core.paths import StoreLayout
from specwire.runtime.core.seams import MemorySeam
from specwire.runtime.core.tool_types import ToolCatalog
from specwire.runtime.facts.store import FactStore
from specwire.runtime.loop import run_chat_loop
from specwire.runtime.loop.history import history_from_log
from specwire.runtime.models import ScriptedModel
from specwire.runtime.sessions.log import SessionLog
from specwire.runtime.wiring import MemoryDeps, wire_memory

TOPICS = {
    "billing": [
        "billing invoices are sent on the first monday",
        "billing uses the annual plan for acme",
        "billing disputes go to finance",
    ],
    "deploy": [
        "deploy target is kubernetes in eu-west",
        "deploy windows are on thursdays",
        "deploy rollbacks need two approvals",
    ],
    "database": [
        "database is postgres sixteen",
        "database backups run nightly",
        "database replicas live in two zones",
    ],
}
RECALL_K = 2


def seeded(tmp_path: Path) -> Path:
    cwd = tmp_path / "work"
    cwd.mkdir()
    layout = StoreLayout.for_cwd(cwd, "recall-spec")
    with FactStore.open(layout.facts_db) as store:
        for facts in TOPICS.values():
            for fact in facts:
                store.remember(fact)
    return cwd


def wired_seam(cwd: Path, **memory: Any) -> tuple[MemorySeam, ToolCatalog, Any]:
    catalog = ToolCatalog()
    fragment = {"spec_name": "recall-spec", "memory": {"recall_k": RECALL_K, **memory}}
    wired = wire_memory(fragment, MemoryDeps(catalog=catalog, cwd=cwd, log=lambda line: None))
    seam = wired.options["memory"]
    assert isinstance(seam, MemorySeam)
    return seam, catalog, wired


def recalled_blocks(log_events: list[dict[str, Any]]) -> list[list[str]]:
    """The recalled block's bullet lines after each context or context_refresh event."""
    shown = []
    for payload in log_events:
        blocks = {block["kind"]: block["text"] for block in payload["blocks"]}
        text = blocks.get("recalled_memory", "")
        shown.append([line for line in text.splitlines() if line.startswith("- ")])
    return shown


def test_a_12_turn_session_recall_follows_the_topic_and_stays_bounded(tmp_path: Path) -> None:
    cwd = seeded(tmp_path)
    seam, catalog, wired = wired_seam(cwd, recall_mode="per-turn", refresh_every=2)
    assert seam.recall_mode == "per-turn" and seam.refresh_every == 2
    topics = ["billing"] * 4 + ["deploy"] * 4 + ["database"] * 4
    messages = [f"tell me about {topic} please ({n})" for n, topic in enumerate(topics)]
    log = new_log(tmp_path)
    try:
        result = run_chat_loop(
            model=ScriptedModel(),
            instructions="You are a helpful assistant.",
            catalog=catalog,
            session_log=log,
            inputs=messages,
            output=lambda text: None,
            log=lambda line: None,
            **wired.options,
        )
    finally:
        wired.close()
    assert result.turns == 12
    recalls = payloads(log, "recall")
    # The first recall at turn 1, then a refresh every second turn: 3, 5, 7, 9, 11.
    assert [r.get("turn") for r in recalls] == [None, 3, 5, 7, 9, 11]
    assert all(r["count"] <= RECALL_K for r in recalls)
    assert recalls[1]["query"] == messages[2] and recalls[1]["earlier"] == [messages[1]]
    expected = ["billing", "deploy", "deploy", "database", "database"]
    for recall, topic in zip(recalls[1:], expected, strict=True):
        assert recall["lines"] and all(topic in line for line in recall["lines"]), recall
    # The prompt the model saw: one recalled block, replaced (never stacked), ≤ recallK lines.
    shown = recalled_blocks(payloads(log, "context") + payloads(log, "context_refresh"))
    assert all(len(lines) <= RECALL_K for lines in shown)
    assert any("billing" in line for line in shown[0])
    assert all("database" in line for line in shown[-1])
    for payload in payloads(log, "context_refresh"):
        assert [b["kind"] for b in payload["blocks"]].count("recalled_memory") == 1


def test_session_start_recall_runs_once(tmp_path: Path) -> None:
    cwd = seeded(tmp_path)
    seam, catalog, wired = wired_seam(cwd)
    assert seam.recall_mode == "session-start"
    log = new_log(tmp_path)
    try:
        run_chat_loop(
            model=ScriptedModel(),
            instructions="You are a helpful assistant.",
            catalog=catalog,
            session_log=log,
            inputs=["billing?", "deploy?", "database?"],
            output=lambda text: None,
            log=lambda line: None,
            **wired.options,
        )
    finally:
        wired.close()
    assert len(payloads(log, "recall")) == 1
    assert payloads(log, "context_refresh") == []


def test_a_failed_refresh_blocks_the_turn(tmp_path: Path) -> None:
    calls: list[str] = []

    def flaky(query: str, k: int) -> list[str]:
        calls.append(query)
        if len(calls) > 2:  # the first recall (message, then instructions) works
            raise OSError("database is locked")
        return ["a fact"]

    seam = MemorySeam(auto_recall=True, recall=flaky, recall_mode="per-turn", refresh_every=1)
    log = new_log(tmp_path)
    out: list[str] = []
    with pytest.raises(RecallUnavailableError, match="turn was not answered"):
        run_chat_loop(
            model=ScriptedModel(),
            instructions="i",
            catalog=ToolCatalog(),
            session_log=log,
            inputs=["one", "two"],
            output=out.append,
            log=lambda line: None,
            memory=seam,
        )
    assert len(out) == 1  # the second turn was not answered
    assert payloads(log, "recall")[-1]["error"] == "database is locked"


def test_a_per_turn_host_carries_the_last_recall_until_the_refresh_is_due(tmp_path: Path) -> None:
    """One loop run per message (channel, managed): recall every second turn, carried between."""
    cwd = seeded(tmp_path)
    sessions = tmp_path / "sessions"
    session_id = new_session_id()
    messages = ["billing one", "billing two", "deploy three", "deploy four", "database five"]
    for message in messages:
        seam, catalog, wired = wired_seam(cwd, recall_mode="per-turn", refresh_every=2)
        log = SessionLog(sessions, session_id)
        try:
            run_chat_loop(
                model=ScriptedModel(),
                instructions="You are a helpful assistant.",
                catalog=catalog,
                session_log=log,
                inputs=[message],
                output=lambda text: None,
                log=lambda line: None,
                single_turn=True,
                history=history_from_log(log.path),
                **wired.options,
            )
        finally:
            wired.close()
    recalls = payloads(SessionLog(sessions, session_id), "recall")
    assert [bool(r.get("carried")) for r in recalls] == [False, True, False, True, False]
    assert recalls[1]["lines"] == recalls[0]["lines"] and recalls[1]["fromTurn"] == 1
    # The refresh at turn 3 looks for the latest message, then the one typed since the last recall.
    assert recalls[2]["query"] == "deploy three" and recalls[2]["earlier"] == ["billing two"]
    assert all("deploy" in line for line in recalls[2]["lines"][:1])
    assert recalls[3]["fromTurn"] == 3
    assert all(r["count"] <= RECALL_K for r in recalls)
