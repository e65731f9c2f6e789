"""Identifiers: safe storage names that never collide, stable conversation session ids."""

from __future__ import annotations

import pytest

from specwire.runtime.core.fragment import storage_name
from specwire.runtime.core.ids import SESSION_ID_RE, conversation_session_id


def test_a_safe_name_is_used_as_is() -> None:
    assert storage_name("support-bot") == "support-bot"
    assert storage_name("Bot_2.v1") == "Bot_2.v1"


@pytest.mark.parametrize("name", ["support bot", "support:bot", "support-bot ", "..", ".", " "])
def test_a_changed_name_gets_a_hash_and_never_collides(name: str) -> None:
    safe = storage_name(name)
    assert safe != "support-bot" and "/" not in safe and safe not in (".", "..", "")
    assert safe == storage_name(name)


def test_distinct_unsafe_names_stay_distinct() -> None:
    names = ["support bot", "support:bot", "support  bot", "..", "."]
    assert len({storage_name(name) for name in names}) == len(names)


def test_conversation_session_ids_are_stable_and_valid() -> None:
    a = conversation_session_id("bot", "channel", "t1")
    assert a == conversation_session_id("bot", "channel", "t1")
    assert SESSION_ID_RE.match(a)
    assert a != conversation_session_id("bot", "channel", "t2")
    assert conversation_session_id("a", "bc") != conversation_session_id("ab", "c")
