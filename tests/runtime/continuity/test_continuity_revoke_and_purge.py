"""What the dream engine asks of continuity: taking a proof back, purging old trash."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from continuity_support import SESSION, START, Clock, make_store, record_tool_call

from specwire.runtime.continuity.proof import EvidenceRef
from specwire.runtime.continuity.store import ContinuityStore
from specwire.runtime.core.paths import StoreLayout


def test_revoke_proof_leaves_a_step_that_is_not_proven_alone(tmp_path: Path) -> None:
    store = make_store(tmp_path)
    store.create_plan("Ship", ["build"])
    path = next(store.plans_dir.glob("plan-0001-*.md"))
    before = path.read_bytes()
    assert store.revoke_proof("plan-0001", 1, ["tu_x"], reason="gone") is None
    assert path.read_bytes() == before


def test_revoke_proof_keeps_the_proofs_it_takes_back(tmp_path: Path) -> None:
    store = make_store(tmp_path)
    store.create_plan("Ship", ["build"])
    record_tool_call(store.sessions_dir, SESSION, "tu_1")
    store.prove_step(None, 1, [EvidenceRef("tu_1")], session_id=SESSION)
    plan = store.revoke_proof("plan-0001", 1, ["tu_1"], reason="the log says it failed")
    assert plan is not None and plan.steps[0].status == "claimed" and not plan.proofs
    [kept] = plan.extra_meta["revokedProofs"]["1"]
    assert kept["toolUseId"] == "tu_1" and kept["reason"] == "the log says it failed"
    again = store.get_plan("plan-0001")  # it round-trips through the file
    assert again.extra_meta == plan.extra_meta


def _cleared(root: Path, spec: str, clock: Clock, text: str) -> ContinuityStore:
    store = ContinuityStore(StoreLayout(root, spec), now=clock)
    store.write_focus(text)
    store.clear("focus")
    return store


def test_purge_deletes_only_this_specs_files_in_old_snapshots(tmp_path: Path) -> None:
    root = tmp_path / ".specwire"
    clock = Clock()
    store = _cleared(root, "demo", clock, "old focus")
    other = ContinuityStore(StoreLayout(root, "other"), now=clock)
    other.write_focus("other focus")
    # One snapshot holding both specs' files: purging one spec must keep the other's.
    shared = store.list_trash()[0].path
    (shared / "state" / "other").mkdir(parents=True)
    (shared / "state" / "other" / "focus.md").write_text("kept")
    clock.advance(8 * 86_400)
    _cleared(root, "demo", clock, "recent focus")
    purged = store.purge_trash(START + timedelta(days=7))
    assert purged == [shared.name]
    assert not (shared / "state" / "demo").exists()
    assert (shared / "state" / "other" / "focus.md").read_text() == "kept"
    assert len(store.list_trash()) == 2  # the shared one (other's file) and the recent one


def test_purge_removes_an_emptied_snapshot_and_never_follows_a_link(tmp_path: Path) -> None:
    root = tmp_path / ".specwire"
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "precious.txt").write_text("keep me")
    clock = Clock()
    store = _cleared(root, "demo", clock, "old focus")
    snapshot = store.list_trash()[0].path
    (snapshot / "state" / "demo" / "link").symlink_to(outside)
    assert store.purge_trash(START + timedelta(days=1)) == [snapshot.name]
    assert not snapshot.exists()
    assert (outside / "precious.txt").read_text() == "keep me"
    assert store.purge_trash(START + timedelta(days=1)) == []
