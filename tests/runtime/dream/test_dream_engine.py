"""A dream run over real stores: the counts, nothing live lost, once per window."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from dream_support import NOW, SESSION, SPEC, Clock, Events, record_call, seed

from specwire.runtime.continuity.frontmatter import split_frontmatter
from specwire.runtime.continuity.proof import EvidenceRef
from specwire.runtime.continuity.retention import read_pins
from specwire.runtime.continuity.store import ContinuityStore
from specwire.runtime.core.errors import StoreError
from specwire.runtime.core.paths import StoreLayout
from specwire.runtime.dream import DreamSettings, run_dream
from specwire.runtime.dream.state import make_dream_dir, run_lock, state_path
from specwire.runtime.facts.store import FactStore
from specwire.runtime.sessions.log import SessionLog

DAILY = DreamSettings(every_s=86_400)


def _live_ids(layout: StoreLayout) -> set[str]:
    with FactStore.open(layout.facts_db, now=Clock(NOW)) as store:
        return {s.fact.id for s in store.list_facts() if s.status == "live"}


def test_a_run_over_a_seeded_store_gives_the_expected_counts(tmp_path: Path) -> None:
    seeded = seed(tmp_path)
    seeded.layout.retention_file.unlink()  # a lost pin: the run puts it back
    events = Events()
    outcome = run_dream(seeded.layout, DAILY, now=Clock(NOW), emit=events)

    assert outcome.status == "ok", outcome.errors
    assert outcome.counts() == {
        "facts.swept": 2,
        "facts.duplicate_groups": 2,
        "facts.superseded": 3,
        "facts.merged": 1,
        "facts.compacted_frames": outcome.facts.compacted_frames,
        "facts.stale": 1,
        "facts.live": 6,
        "wiki.articles": 3,
        "wiki.stale": 2,
        "wiki.damaged": 0,
        "continuity.proofs_checked": 3,
        "continuity.steps_demoted": 1,
        "continuity.proofs_unverifiable": 1,
        "continuity.sessions_pinned": 1,
        "continuity.handoffs_refreshed": 1,
        "continuity.trash_purged": 1,
    }
    assert [kind for kind, _ in events.seen] == ["dream_run"]
    assert events.seen[0][1]["counts"] == outcome.counts()
    assert events.seen[0][1]["status"] == "ok"

    state = json.loads(state_path(seeded.layout).read_text())
    assert state["windowKey"] == outcome.window_key
    assert state["status"] == "ok"
    assert state["stale"] == {
        "facts": [seeded.ids["stale"]],
        "articles": ["billing-rules", "deploy-process"],
    }
    assert read_pins(seeded.layout.retention_file, root=tmp_path) == [SESSION]


def test_no_live_information_is_lost(tmp_path: Path) -> None:
    seeded = seed(tmp_path)
    layout = seeded.layout
    with FactStore.open(layout.facts_db, now=Clock(NOW)) as store:
        before = {s.fact.id: s.fact for s in store.list_facts() if s.status in ("live", "expired")}
    run_dream(layout, DAILY, now=Clock(NOW))
    with FactStore.open(layout.facts_db, now=Clock(NOW)) as store:
        after = {s.fact.id: s for s in store.list_facts()}
    live = {fid for fid, s in after.items() if s.status == "live"}
    for fid, fact in before.items():
        status = after[fid]
        if status.status == "live":
            continue
        if status.status == "expired":
            assert fact.expires_at is not None and fact.expires_at <= NOW
            continue
        # Superseded: it points at a live survivor that says the same and keeps its tags.
        assert status.status == "superseded"
        assert status.tombstone is not None
        survivor = status.fact.superseded_by
        assert survivor == status.tombstone.superseded_by
        assert survivor in live
        kept = after[survivor].fact
        assert set(fact.tags) <= set(kept.tags)
        assert set(fact.provenance.evidence) <= set(kept.provenance.evidence)
    ids = seeded.ids
    assert {ids["exact_a"], ids["port"], ids["port2"], ids["fresh"], ids["stale"]} <= live
    merged = after[ids["near_b"]].fact.superseded_by
    assert merged is not None
    assert after[merged].fact.tags == ("finance", "billing")
    assert after[merged].fact.provenance.evidence == ("tu_inv",)
    assert after[ids["near_a"]].fact.superseded_by == merged
    assert after[ids["exact_b"]].fact.superseded_by == ids["exact_a"]


def test_a_step_whose_evidence_failed_is_demoted_and_the_handoff_says_so(
    tmp_path: Path,
) -> None:
    seeded = seed(tmp_path)
    run_dream(seeded.layout, DAILY, now=Clock(NOW))
    store = ContinuityStore(seeded.layout, now=Clock(NOW))
    plan = store.get_plan("plan-0001")
    assert [s.status for s in plan.steps] == ["proven", "claimed", "proven", "open"]
    assert 2 not in plan.proofs
    path = next(store.plans_dir.glob("plan-0001-*.md"))
    meta, _ = split_frontmatter(path.read_text())
    [revoked] = meta["revokedProofs"]["2"]
    assert revoked["toolUseId"] == "tu_tests"
    assert "error_result" in revoked["reason"]
    handoff = store.read_handoff()
    assert handoff is not None
    assert "- Verify or redo: run the tests (plan-0001 step 2)" in handoff
    assert f"## Last session\n{SESSION} (stop: complete)" in handoff


def test_trash_older_than_seven_days_is_purged_for_this_spec_only(tmp_path: Path) -> None:
    seeded = seed(tmp_path)
    trash = tmp_path / "trash"
    before = sorted(p.name for p in trash.iterdir())
    run_dream(seeded.layout, DAILY, now=Clock(NOW))
    after = sorted(p.name for p in trash.iterdir())
    assert before == ["2026-05-22T12-00-00", "2026-05-22T12-00-00-1", "2026-05-31T12-00-00"]
    assert after == ["2026-05-22T12-00-00-1", "2026-05-31T12-00-00"]
    assert (trash / after[0] / "state" / "other" / "focus.md").is_file()


def test_a_second_run_in_the_same_window_is_a_no_op(tmp_path: Path) -> None:
    seeded = seed(tmp_path)
    first = run_dream(seeded.layout, DAILY, now=Clock(NOW))
    state = state_path(seeded.layout).read_bytes()
    live = _live_ids(seeded.layout)
    events = Events()
    second = run_dream(seeded.layout, DAILY, now=Clock(NOW.replace(hour=23)), emit=events)
    assert second.status == "skipped"
    assert second.window_key == first.window_key
    assert second.note is not None and "already ran in this window" in second.note
    assert set(second.counts().values()) == {0}
    assert events.seen == []
    assert state_path(seeded.layout).read_bytes() == state
    assert _live_ids(seeded.layout) == live


def test_the_next_window_runs_again_and_finds_nothing_left_to_fold(tmp_path: Path) -> None:
    seeded = seed(tmp_path)
    run_dream(seeded.layout, DAILY, now=Clock(NOW))
    again = run_dream(seeded.layout, DAILY, now=Clock(NOW.replace(day=2)))
    assert again.status == "ok"
    assert again.facts.swept == again.facts.superseded == again.facts.duplicate_groups == 0
    assert again.continuity.steps_demoted == again.continuity.handoffs_refreshed == 0
    assert again.continuity.trash_purged == 0


def test_force_runs_in_a_window_that_already_had_a_run(tmp_path: Path) -> None:
    seeded = seed(tmp_path)
    run_dream(seeded.layout, DAILY, now=Clock(NOW))
    forced = run_dream(seeded.layout, DAILY, now=Clock(NOW), force=True)
    assert forced.status == "ok"


def test_an_empty_root_runs_and_records_zero_counts(tmp_path: Path) -> None:
    layout = StoreLayout(tmp_path / ".specwire", SPEC)
    outcome = run_dream(layout, DAILY, now=Clock(NOW))
    assert outcome.status == "ok", outcome.errors
    assert set(outcome.counts().values()) == {0}
    assert not layout.facts_db.exists()


def test_a_damaged_state_file_stops_the_run_before_anything_changes(tmp_path: Path) -> None:
    seeded = seed(tmp_path)
    path = state_path(seeded.layout)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("{not json")
    live = _live_ids(seeded.layout)
    with pytest.raises(StoreError, match="not valid JSON"):
        run_dream(seeded.layout, DAILY, now=Clock(NOW))
    assert _live_ids(seeded.layout) == live


def test_a_symlinked_dream_folder_is_refused_and_nothing_is_written_outside(
    tmp_path: Path,
) -> None:
    seeded = seed(tmp_path / "root")
    outside = tmp_path / "outside"
    outside.mkdir()
    (seeded.layout.state_dir / "dream").symlink_to(outside)
    with pytest.raises(StoreError, match="dream"):
        run_dream(seeded.layout, DAILY, now=Clock(NOW))
    assert list(outside.iterdir()) == []


def test_session_scoped_folders_are_re_checked_too(tmp_path: Path) -> None:
    layout = StoreLayout(tmp_path, SPEC)
    scope = layout.session_state_dir("sess_1111111111111111")
    store = ContinuityStore(layout, scope_dir=scope, now=Clock(NOW))
    record_call(layout.sessions_dir, SESSION, "tu_1")
    store.create_plan("Chat plan", ["answer"])
    assert store.prove_step(None, 1, [EvidenceRef("tu_1")], session_id=SESSION).status == "proven"
    SessionLog(layout.sessions_dir, SESSION, now=Clock(NOW)).append(
        "tool_result", {"toolUseId": "tu_1", "name": "bash", "isError": True, "text": "no"}
    )
    outcome = run_dream(layout, DAILY, now=Clock(NOW))
    assert outcome.continuity.steps_demoted == 1
    assert store.get_plan("plan-0001").steps[0].status == "claimed"


def test_a_run_while_another_holds_the_lock_is_refused(tmp_path: Path) -> None:
    seeded = seed(tmp_path)
    make_dream_dir(seeded.layout)
    with run_lock(seeded.layout, Clock(NOW)), pytest.raises(StoreError, match="dream run"):
        run_dream(seeded.layout, DAILY, now=Clock(NOW))
    assert not state_path(seeded.layout).exists()


def test_require_mode_demotes_to_in_progress(tmp_path: Path) -> None:
    seeded = seed(tmp_path)
    run_dream(seeded.layout, DAILY, now=Clock(NOW), proof_mode="require")
    plan = ContinuityStore(seeded.layout, now=Clock(NOW)).get_plan("plan-0001")
    assert plan.steps[1].status == "in_progress"
