"""Auto-capture from a real JSONL session log written with ``runtime.events.SessionLog``."""

from __future__ import annotations

from pathlib import Path

import pytest
from facts_support import DAY_MS, FakeClock

from runtime.events import SessionLog, read_events
from runtime.facts.capture import capture_session, durable_facts, split_turns
from runtime.facts.model import InvalidRequestError, Provenance
from runtime.facts.store import FactStore

SESSION = "sess_0123456789abcdef"
LONG_ANSWER = "Summary: " + "the export pipeline " * 20


def user(log: SessionLog, text: str, turn: int, synthetic: bool = False) -> None:
    payload: dict[str, object] = {"text": text, "turn": turn}
    if synthetic:
        payload["synthetic"] = True
    log.append("user_message", payload)


def tool(log: SessionLog, tool_use_id: str, *, error: bool | None = False) -> None:
    log.append("tool_use", {"id": tool_use_id, "name": "read", "input": {}})
    result: dict[str, object] = {"toolUseId": tool_use_id, "name": "read", "text": "..."}
    if error is not None:
        result["isError"] = error
    log.append("tool_result", result)


def assistant(log: SessionLog, text: str, turn: int) -> None:
    log.append("assistant_message", {"text": text, "turn": turn})


def write_session(sessions_dir: Path, clock: FakeClock) -> Path:
    log = SessionLog(sessions_dir, SESSION, now=clock)
    log.append("session_start", {"spec": "s", "target": "cli", "model": "scripted"})
    assistant(log, "a stray message before any user turn", 0)
    # Turn 1: two successful tool uses, one failed one, a synthetic nudge that is no new turn.
    user(log, "what plan is the customer on?", 1)
    assistant(log, "Let me check the ticket.", 1)
    tool(log, "tu_ok1")
    tool(log, "tu_failed", error=True)
    user(log, "[reminder: answer briefly]", 1, synthetic=True)
    tool(log, "tu_ok2", error=None)  # isError missing: counts as success
    assistant(log, "\n\n   The customer   plan is\tEnterprise.  \nSecond line is ignored.", 1)
    # Turn 2: the same fact in other case and spacing is a duplicate.
    user(log, "remind me?", 2)
    assistant(log, "the CUSTOMER plan is enterprise.", 2)
    # Turn 3: a long answer is cut to 240 characters; its failed tool gives no evidence.
    user(log, "summarize", 3)
    tool(log, "tu_failed2", error=True)
    assistant(log, LONG_ANSWER, 3)
    # Turn 4: no answer at all (aborted) yields nothing; turn 5: blank final answer neither.
    user(log, "and?", 4)
    tool(log, "tu_orphan")
    user(log, "hello?", 5)
    assistant(log, "Working on it", 5)
    assistant(log, "   \n  ", 5)
    return log.path


def test_turns_split_at_real_user_messages_only(tmp_path: Path, clock: FakeClock) -> None:
    turns = split_turns(read_events(write_session(tmp_path, clock)))
    assert len(turns) == 5
    assert turns[0].evidence == ["tu_ok1", "tu_ok2"]
    assert turns[2].evidence == []
    assert turns[3].final_answer is None and turns[3].evidence == ["tu_orphan"]


def test_one_deduplicated_clipped_fact_per_turn_with_its_evidence(
    tmp_path: Path, clock: FakeClock
) -> None:
    facts = durable_facts(read_events(write_session(tmp_path, clock)))
    assert [f.text for f in facts] == [
        "The customer plan is Enterprise.",
        LONG_ANSWER.strip()[:239] + "…",
    ]
    assert len(facts[1].text) == 240
    assert [f.evidence for f in facts] == [("tu_ok1", "tu_ok2"), ()]


def test_at_most_eight_facts_per_session(tmp_path: Path, clock: FakeClock) -> None:
    log = SessionLog(tmp_path, SESSION, now=clock)
    for turn in range(1, 12):
        user(log, f"q{turn}", turn)
        assistant(log, f"decision number {turn} is final", turn)
    facts = durable_facts(read_events(log.path))
    assert [f.text for f in facts] == [f"decision number {n} is final" for n in range(1, 9)]


def test_capture_writes_tagged_facts_with_provenance_and_ttl(
    tmp_path: Path, store: FactStore, clock: FakeClock
) -> None:
    sessions = tmp_path / "sessions"
    write_session(sessions, clock)
    count = capture_session(
        store, sessions, SESSION, ttl_ms=30 * DAY_MS, threshold=1, completed_turns=5
    )
    assert count == 2
    first, second = (entry.fact for entry in store.list_facts())
    assert first.text == "The customer plan is Enterprise."
    assert first.tags == ("auto-capture", SESSION)
    assert first.provenance == Provenance(SESSION, ("tu_ok1", "tu_ok2"))
    assert second.provenance == Provenance(SESSION, ())
    assert first.expires_at is not None
    assert (first.expires_at - first.created_at).days == 30


def test_capturing_the_same_session_twice_writes_nothing(
    tmp_path: Path, store: FactStore, clock: FakeClock
) -> None:
    write_session(tmp_path, clock)
    assert capture_session(store, tmp_path, SESSION, ttl_ms=None, threshold=1, completed_turns=5)
    before = store.list_facts()
    again = capture_session(store, tmp_path, SESSION, ttl_ms=None, threshold=1, completed_turns=5)
    assert again == 0 and store.list_facts() == before


def test_a_fact_remembered_by_hand_is_not_captured_again(
    tmp_path: Path, store: FactStore, clock: FakeClock
) -> None:
    write_session(tmp_path, clock)
    store.remember("the customer plan is ENTERPRISE.")
    assert capture_session(store, tmp_path, SESSION, ttl_ms=None, threshold=1, completed_turns=5)
    assert store.size() == 2  # only the long summary was new


@pytest.mark.parametrize(
    ("threshold", "completed_turns", "expected"),
    [(3, 2, 0), (3, 3, 2), (0, 0, 0), (0, 1, 2), (1, 0, 0)],
)
def test_capture_is_gated_by_the_threshold(
    tmp_path: Path,
    store: FactStore,
    clock: FakeClock,
    threshold: int,
    completed_turns: int,
    expected: int,
) -> None:
    write_session(tmp_path, clock)
    count = capture_session(
        store,
        tmp_path,
        SESSION,
        ttl_ms=None,
        threshold=threshold,
        completed_turns=completed_turns,
    )
    assert count == expected and store.size() == expected


def test_a_missing_log_captures_nothing(tmp_path: Path, store: FactStore) -> None:
    assert (
        capture_session(store, tmp_path, SESSION, ttl_ms=None, threshold=1, completed_turns=3) == 0
    )


@pytest.mark.parametrize("bad", ["", "..", "../elsewhere", "a/b", "a\\b"])
def test_a_session_id_must_name_a_file_in_the_sessions_dir(
    tmp_path: Path, store: FactStore, bad: str
) -> None:
    with pytest.raises(InvalidRequestError, match="not a session id"):
        capture_session(store, tmp_path, bad, ttl_ms=None, threshold=1, completed_turns=1)
