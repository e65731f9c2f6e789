"""The Slack events and scopes a channel bot needs are written once (the contract module); the
bundle README and docs/serving.md list exactly those."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from specwire.runtime.core.fragment import SLACK_BOT_SCOPES, SLACK_EVENT_SUBSCRIPTIONS

ROOT = Path(__file__).resolve().parents[2]
NAME = r"`([a-z_]+[.:][a-z_.:]+|app_mention)`"


def listed(text: str) -> tuple[set[str], set[str]]:
    start = text.index("/slack/events")
    block = text[start : text.index(")", text.index("bot scopes", start))]
    names = set(re.findall(NAME, block))
    events = {n for n in names if "." in n or n == "app_mention"}
    return events, names - events


@pytest.mark.parametrize(
    "path",
    [
        "docs/serving.md",
        "snapshots/channel-helpdesk/README.md",
        "snapshots/channel-plain/README.md",
    ],
)
def test_the_events_and_scopes_are_the_ones_the_host_needs(path: str) -> None:
    events, scopes = listed((ROOT / path).read_text(encoding="utf-8"))
    assert events == set(SLACK_EVENT_SUBSCRIPTIONS)
    assert scopes == set(SLACK_BOT_SCOPES)
