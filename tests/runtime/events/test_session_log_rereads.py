"""Reading a log again parses only what was appended, and still sees every change to it."""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path

from specwire.runtime.sessions.log import SessionLog, read_events

SESSION = "sess_00000000000000cc"


def at_noon() -> datetime:
    return datetime(2026, 1, 1, 12, tzinfo=UTC)


def texts(path: Path) -> list[str]:
    return [event.payload["text"] for event in read_events(path)]


def test_appended_events_are_seen_on_the_next_read(tmp_path: Path) -> None:
    log = SessionLog(tmp_path, SESSION, now=at_noon)
    log.append("user_message", {"text": "one"})
    assert texts(log.path) == ["one"]
    log.append("user_message", {"text": "two"})
    assert texts(log.path) == ["one", "two"]
    again = SessionLog(tmp_path, SESSION, now=at_noon)  # another host picks up the count
    assert again.append("user_message", {"text": "three"}).seq == 3
    assert texts(log.path) == ["one", "two", "three"]


def test_an_edit_a_truncation_or_a_replacement_is_read_from_the_start(tmp_path: Path) -> None:
    log = SessionLog(tmp_path, SESSION, now=at_noon)
    for text in ("alpha", "beta", "gamma"):
        log.append("user_message", {"text": text})
    assert texts(log.path) == ["alpha", "beta", "gamma"]
    whole = log.path.read_bytes()

    log.path.write_bytes(whole.replace(b"beta", b"BETA"))  # same size, same file: seal breaks
    assert texts(log.path) == ["alpha", "gamma"]

    log.path.write_bytes(whole.split(b"\n", 1)[0] + b"\n")  # truncated to its first line
    assert texts(log.path) == ["alpha"]

    replacement = tmp_path / "replacement"
    replacement.write_bytes(whole)
    os.replace(replacement, log.path)  # another file at the same path
    assert texts(log.path) == ["alpha", "beta", "gamma"]


def test_a_torn_last_line_is_read_again_once_completed(tmp_path: Path) -> None:
    log = SessionLog(tmp_path, SESSION, now=at_noon)
    log.append("user_message", {"text": "first"})
    log.append("user_message", {"text": "second"})
    whole = log.path.read_bytes()
    cut = whole.rindex(b"\n", 0, len(whole) - 1) + 1
    log.path.write_bytes(whole[: cut + 10])  # the second line torn mid-write
    assert texts(log.path) == ["first"]
    log.path.write_bytes(whole)
    assert texts(log.path) == ["first", "second"]


def test_rewriting_a_log_erases_text_and_keeps_it_sealed(tmp_path: Path) -> None:
    import re

    from specwire.runtime.sessions.log import rewrite_log

    log = SessionLog(tmp_path, SESSION, now=at_noon)
    log.append("user_message", {"text": "my card is 4111-1111 please"})
    log.append("tool_result", {"toolUseId": "tu_a", "name": "read", "text": "card 4111-1111"})
    log.append("user_message", {"text": "unrelated"})
    with log.path.open("ab") as handle:
        handle.write(b'{"forged": "4111-1111"}\n')
    assert texts_or_results(log.path) == [
        "my card is 4111-1111 please",
        "card 4111-1111",
        "unrelated",
    ]

    changed = rewrite_log(log.path, lambda text: re.sub(r"4111-1111", "[erased]", text))
    assert changed == 3
    assert b"4111-1111" not in log.path.read_bytes()
    assert texts_or_results(log.path) == [
        "my card is [erased] please",
        "card [erased]",
        "unrelated",
    ]
    assert [event.seq for event in read_events(log.path)] == [1, 2, 3]
    assert SessionLog(tmp_path, SESSION, now=at_noon).append("user_message", {"text": "x"}).seq == 4


def texts_or_results(path: Path) -> list[str]:
    return [event.payload["text"] for event in read_events(path)]
