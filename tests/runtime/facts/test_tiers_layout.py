"""Tier labels, keys and caps (runtime.facts.tiers.layout) and usage (tiers.usage)."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta, timezone

import pytest

from specwire.runtime.facts.model import TIERS
from specwire.runtime.facts.tiers.layout import (
    TIER_SPECS,
    WRITABLE_TIERS,
    TierError,
    is_tier_label,
    label,
    note_key,
    split_label,
    today_of,
)
from specwire.runtime.facts.tiers.usage import Usage, entries

TODAY = date(2026, 5, 21)


def test_the_seven_tiers_and_their_caps_are_crewships() -> None:
    assert tuple(TIER_SPECS) == TIERS
    caps = {name: spec.cap_bytes for name, spec in TIER_SPECS.items()}
    assert caps == {
        "AGENT": 4000,
        "CREW": 4000,
        "PERSONA": 1500,
        "pins": 8000,
        "daily": 30000,
        "peers": 1500,
        "lessons": None,
    }
    assert WRITABLE_TIERS == ("AGENT", "CREW", "PERSONA", "pins", "daily", "peers")
    assert TIER_SPECS["AGENT"].soft_cap_bytes() == 3200
    assert TIER_SPECS["lessons"].soft_cap_bytes() is None


@pytest.mark.parametrize(
    ("tier", "key", "expected"),
    [
        ("AGENT", None, "AGENT.md"),
        ("CREW", None, "CREW.md"),
        ("PERSONA", "ignored", "PERSONA.md"),
        ("pins", None, "pins.md"),
        ("lessons", None, "lessons.md"),
        ("daily", None, "daily/2026-05-21.md"),
        ("daily", "2026-01-02", "daily/2026-01-02.md"),
        ("peers", "ana-lopez", "peers/ana-lopez.md"),
        ("peers", "zoë", "peers/zoë.md"),
    ],
)
def test_labels_are_tier_relative(tier: str, key: str | None, expected: str) -> None:
    made = label(tier, note_key(tier, key, TODAY))
    assert made == expected
    assert split_label(made) == (tier, note_key(tier, key, TODAY))
    assert is_tier_label(made)


@pytest.mark.parametrize(
    ("tier", "key"),
    [
        ("peers", "../AGENT"),
        ("peers", "a/b"),
        ("peers", "a\\b"),
        ("peers", "a..b"),
        ("AGENT", "../x"),  # ignored by AGENT, but still refused at the boundary
        ("daily", "2026/05/21"),
        ("daily", "2026-02-30"),
        ("daily", "yesterday"),
        ("peers", None),
        ("peers", "   "),
        ("peers", "-leading-dash"),
        ("peers", "x" * 65),
        ("peers", "has space"),
    ],
)
def test_bad_keys_are_refused_with_one_line(tier: str, key: str | None) -> None:
    with pytest.raises(TierError) as caught:
        note_key(tier, key, TODAY)
    assert "\n" not in str(caught.value)


def test_unknown_tier_is_refused() -> None:
    with pytest.raises(TierError, match="unknown memory tier 'SECRETS'"):
        note_key("SECRETS", None, TODAY)


@pytest.mark.parametrize(
    "text",
    ["notes.md", "AGENT", "daily.md", "AGENT/x.md", "peers/.md", "peers/../x.md", "daily/x.md", ""],
)
def test_what_is_not_a_tier_label(text: str) -> None:
    assert split_label(text) is None
    assert not is_tier_label(text)


def test_daily_date_is_the_clocks_utc_date() -> None:
    late = datetime(2026, 5, 21, 23, 30, tzinfo=timezone(timedelta(hours=-5)))
    assert today_of(late) == date(2026, 5, 22)
    assert today_of(datetime(2026, 5, 21, 0, 0, tzinfo=UTC)) == date(2026, 5, 21)


def test_usage_says_bytes_of_cap_and_percent_rounded_down() -> None:
    assert Usage(3199, 4000).text() == "3199 of 4000 bytes, 79%"
    assert not Usage(3199, 4000).soft_capped
    assert Usage(3200, 4000).soft_capped
    assert Usage(4000, 4000).pct == 100
    assert Usage(10, None).text() == "10 bytes, uncapped"
    assert not Usage(10**6, None).soft_capped


def test_entries_are_the_non_empty_lines() -> None:
    assert entries("- a\n\n- b\n  \n") == ["- a", "- b"]
