"""A store seeded with everything a dream run has work for: real SQLite, files and logs."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from specwire.runtime.continuity.proof import EvidenceRef
from specwire.runtime.continuity.store import ContinuityStore
from specwire.runtime.core.paths import StoreLayout
from specwire.runtime.core.seams import HandoffInput
from specwire.runtime.facts.model import Provenance
from specwire.runtime.facts.store import FactStore
from specwire.runtime.sessions.log import SessionLog
from specwire.runtime.wiki.store import ArticleDraft, WikiStore

SPEC = "demo"
SESSION = "sess_0123456789abcdef"
GONE_SESSION = "sess_00000000000000aa"
NOW = datetime(2026, 6, 1, 12, 0, 0, tzinfo=UTC)
DAY = timedelta(days=1)
HOUR_MS = 3600 * 1000


@dataclass
class Clock:
    moment: datetime

    def __call__(self) -> datetime:
        return self.moment


@dataclass
class Events:
    seen: list[tuple[str, dict[str, Any]]] = field(default_factory=list)

    def __call__(self, kind: str, payload: Mapping[str, Any]) -> None:
        self.seen.append((kind, dict(payload)))


def record_call(
    sessions_dir: Path, session_id: str, tool_use_id: str, *, is_error: bool = False
) -> None:
    log = SessionLog(sessions_dir, session_id, now=Clock(NOW - 2 * DAY))
    log.append("tool_use", {"id": tool_use_id, "name": "bash", "input": {"cmd": "make"}})
    log.append(
        "tool_result",
        {"toolUseId": tool_use_id, "name": "bash", "isError": is_error, "text": "ok"},
    )


@dataclass(frozen=True)
class Seeded:
    layout: StoreLayout
    ids: dict[str, str]


def seed(root: Path) -> Seeded:
    """Facts: an exact-duplicate pair, a near-duplicate trio (one with an extra tag), two
    expired facts, one stale fact, unrelated fresh ones. Wiki: two stale articles, one fresh.
    Continuity: a plan with a step whose proof now fails, one whose log is gone, one that holds;
    a handoff written before. Trash: an old and a recent snapshot of this spec, an old one of
    another spec."""
    layout = StoreLayout(root, SPEC)
    ids: dict[str, str] = {}
    old = Clock(NOW - 200 * DAY)
    recent = Clock(NOW - 2 * DAY)
    with FactStore.open(layout.facts_db, now=old) as store:
        ids["stale"] = store.remember("The office wifi password rotates quarterly").id
    with FactStore.open(layout.facts_db, now=recent) as store:
        ids["exact_a"] = store.remember("Deploys go out on Fridays", ["ops"]).id
        ids["exact_b"] = store.remember("deploys go  out on fridays", ["ops"]).id
        near = "the customer prefers paper invoices sent by email at the end of each month"
        ids["near_a"] = store.remember(near, ["billing"]).id
        ids["near_b"] = store.remember(
            near.replace("each", "every"),
            ["finance"],
            provenance=Provenance(SESSION, ("tu_inv",)),
        ).id
        ids["near_c"] = store.remember(near.upper(), ["billing"]).id
        ids["port"] = store.remember("the staging database listens on port 5432").id
        ids["port2"] = store.remember("the staging database listens on port 5433").id
        ids["expiring_1"] = store.remember("Temporary: the build is red", ttl_ms=HOUR_MS).id
        ids["expiring_2"] = store.remember("Temporary: standup moved", ttl_ms=HOUR_MS).id
        ids["fresh"] = store.remember("The user's name is Ada").id

    wiki_old = WikiStore(layout, now=Clock(NOW - 45 * DAY))
    for slug in ("deploy-process", "billing-rules"):
        wiki_old.write(ArticleDraft(slug, slug.title(), f"About {slug}."), expected_version=None)
    WikiStore(layout, now=recent).write(
        ArticleDraft("on-call", "On call", "Who is on call."), expected_version=None
    )

    sessions = layout.sessions_dir
    record_call(sessions, SESSION, "tu_build")
    record_call(sessions, SESSION, "tu_tests")
    record_call(sessions, GONE_SESSION, "tu_gone")
    store = ContinuityStore(layout, now=recent)
    store.create_plan("Ship the release", ["build", "run the tests", "old step", "publish"])
    for step, tu, session in ((1, "tu_build", SESSION), (2, "tu_tests", SESSION)):
        done = store.prove_step(None, step, [EvidenceRef(tu)], session_id=session)
        assert done.status == "proven", done.refusal
    done = store.prove_step(None, 3, [EvidenceRef("tu_gone")], session_id=GONE_SESSION)
    assert done.status == "proven", done.refusal
    store.write_handoff(HandoffInput(SESSION, "complete"))
    # Since then: the log records that the test run failed after all, and one log was purged.
    log = SessionLog(sessions, SESSION, now=recent)
    log.append(
        "tool_result",
        {"toolUseId": "tu_tests", "name": "bash", "isError": True, "text": "2 failed"},
    )
    (sessions / f"{GONE_SESSION}.jsonl").unlink()

    for when in (NOW - 10 * DAY, NOW - 1 * DAY):
        trashing = ContinuityStore(layout, now=Clock(when))
        trashing.write_focus(f"focus as of {when:%Y-%m-%d}")
        trashing.clear("focus")
    other = ContinuityStore(StoreLayout(root, "other"), now=Clock(NOW - 10 * DAY))
    other.write_focus("the other spec's focus")
    other.clear("focus")
    return Seeded(layout, ids)
