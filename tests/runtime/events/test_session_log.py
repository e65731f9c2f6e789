"""Session logs: append-only JSONL; readers skip torn or foreign lines instead of failing."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from runtime.events import SessionLog, read_events, resolve_tool_use

SESSION = "sess_0123456789abcdef"


def at_noon() -> datetime:
    return datetime(2026, 7, 1, 12, 0, tzinfo=UTC)


def test_events_round_trip_with_sequence_numbers(tmp_path: Path) -> None:
    log = SessionLog(tmp_path, SESSION, now=at_noon)
    log.append("user_message", {"text": "hi", "turn": 1})
    log.append("assistant_message", {"text": "hello", "turn": 1})
    events = list(read_events(log.path))
    assert [(e.seq, e.type, e.at) for e in events] == [
        (1, "user_message", "2026-07-01T12:00:00.000Z"),
        (2, "assistant_message", "2026-07-01T12:00:00.000Z"),
    ]
    assert log.path.stat().st_mode & 0o777 == 0o600


def test_foreign_and_torn_lines_are_skipped_and_appending_goes_on(tmp_path: Path) -> None:
    path = tmp_path / f"{SESSION}.jsonl"
    path.write_bytes(
        b'{"seq": 1, "type": "user_message", "payload": {"text": "kept"}}\n'
        b'{"seq": "x", "type": "odd", "payload": {}}\n'
        b"\xff\xfe not utf-8\n"
        b"[1, 2]\n"
        b'{"type": "no payload"}\n'
        b'{"seq": 9, "type": "tool_use", "payl'
    )
    assert [(e.seq, e.type) for e in read_events(path)] == [(1, "user_message"), (0, "odd")]
    log = SessionLog(tmp_path, SESSION, now=at_noon)
    event = log.append("assistant_message", {"text": "still works"})
    assert event.seq == 3
    assert [e.type for e in read_events(path)][-1] == "assistant_message"


def test_a_tool_use_resolves_only_with_its_result(tmp_path: Path) -> None:
    log = SessionLog(tmp_path, SESSION, now=at_noon)
    log.append("tool_use", {"id": "tu_a", "name": "read", "input": {"path": "x"}})
    assert resolve_tool_use(tmp_path, SESSION, "tu_a").verdict == "missing"
    log.append("tool_result", {"toolUseId": "tu_a", "name": "read", "isError": False, "text": "x"})
    found = resolve_tool_use(tmp_path, SESSION, "tu_a")
    assert (found.verdict, found.tool_name, found.input) == ("verified", "read", {"path": "x"})


def test_an_errored_result_is_reported_as_such(tmp_path: Path) -> None:
    log = SessionLog(tmp_path, SESSION, now=at_noon)
    log.append("tool_use", {"id": "tu_b", "name": "bash", "input": {}})
    log.append("tool_result", {"toolUseId": "tu_b", "name": "bash", "isError": True, "text": "1"})
    assert resolve_tool_use(tmp_path, SESSION, "tu_b").verdict == "error_result"


def test_evidence_in_a_child_session_is_found(tmp_path: Path) -> None:
    child = "sess_00000000000000cc"
    SessionLog(tmp_path, SESSION, now=at_noon).append("sub_agent_start", {"childSessionId": child})
    log = SessionLog(tmp_path, child, now=at_noon)
    log.append("tool_use", {"id": "tu_c", "name": "ls", "input": {}})
    log.append("tool_result", {"toolUseId": "tu_c", "name": "ls", "isError": False, "text": "a"})
    assert resolve_tool_use(tmp_path, SESSION, "tu_c").verdict == "verified"
