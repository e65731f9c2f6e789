"""The proof ladder: claimed is free, proven only with evidence found in a real session log."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from continuity_support import (
    OTHER_SESSION,
    SESSION,
    Clock,
    make_store,
    record_tool_call,
)

from specwire.runtime.continuity.frontmatter import split_frontmatter
from specwire.runtime.continuity.proof import EvidenceRef, result_digest
from specwire.runtime.continuity.retention import read_pins
from specwire.runtime.core.errors import StoreError
from specwire.runtime.sessions.log import SessionLog


def _plan_file(tmp_path: Path) -> Path:
    (path,) = (tmp_path / ".specwire" / "state" / "demo" / "plans").glob("plan-*.md")
    return path


def test_claimed_is_free_in_ladder_mode(tmp_path: Path) -> None:
    store = make_store(tmp_path)
    store.create_plan("Ship", ["build", "test"])
    plan = store.set_step_status(None, 1, "claimed")
    assert plan.steps[0].status == "claimed"
    assert "1. [claimed] build" in _plan_file(tmp_path).read_text()


def test_proven_cannot_be_set_directly(tmp_path: Path) -> None:
    store = make_store(tmp_path)
    store.create_plan("Ship", ["build"])
    with pytest.raises(StoreError, match="PlanComplete"):
        store.set_step_status(None, 1, "proven")
    assert store.get_plan("plan-0001").steps[0].status == "open"


def test_proven_refused_for_a_tool_use_that_is_not_in_the_log(tmp_path: Path) -> None:
    store = make_store(tmp_path)
    store.create_plan("Ship", ["build"])
    record_tool_call(store.sessions_dir, SESSION, "tu_other")
    before = _plan_file(tmp_path).read_bytes()
    done = store.prove_step(None, 1, [EvidenceRef("tu_ghost")], session_id=SESSION)
    assert done.refusal == (
        "no verified evidence for tu_ghost: run the action first, then complete the step "
        "with its toolUseId."
    )
    assert [c.verdict for c in done.checks] == ["missing"]
    assert _plan_file(tmp_path).read_bytes() == before
    assert not store.layout.retention_file.exists()


def test_proven_refused_for_a_tool_use_whose_result_is_an_error(tmp_path: Path) -> None:
    store = make_store(tmp_path)
    store.create_plan("Ship", ["build"])
    record_tool_call(store.sessions_dir, SESSION, "tu_fail", result="exit 1", is_error=True)
    done = store.prove_step(None, 1, [EvidenceRef("tu_fail")], session_id=SESSION)
    assert done.refusal is not None
    assert "tu_fail" in done.refusal and "failed" in done.refusal
    assert [c.verdict for c in done.checks] == ["error_result"]
    assert store.get_plan("plan-0001").steps[0].status == "open"


@pytest.mark.parametrize(
    "tool",
    ["PlanRead", "Remember", "FocusWrite", "memory_save", "memory_lookup", "memory_remember"],
)
def test_a_call_to_a_memory_tool_is_not_evidence(tmp_path: Path, tool: str) -> None:
    store = make_store(tmp_path)
    store.create_plan("Ship", ["build"])
    record_tool_call(store.sessions_dir, SESSION, "tu_self", name=tool, result="plan-0001")
    done = store.prove_step(None, 1, [EvidenceRef("tu_self")], session_id=SESSION)
    assert done.refusal is not None
    assert f"tu_self is a call to {tool}" in done.refusal and "not evidence" in done.refusal
    assert [c.verdict for c in done.checks] == ["not_evidence"]
    assert store.get_plan("plan-0001").steps[0].status == "open"
    assert not store.layout.retention_file.exists()


def test_a_tool_use_without_its_result_is_not_evidence(tmp_path: Path) -> None:
    store = make_store(tmp_path)
    store.create_plan("Ship", ["build"])
    SessionLog(store.sessions_dir, SESSION).append(
        "tool_use", {"id": "tu_half", "name": "bash", "input": {}}
    )
    done = store.prove_step(None, 1, [EvidenceRef("tu_half")], session_id=SESSION)
    assert done.refusal is not None and done.checks[0].verdict == "missing"


def test_one_bad_citation_refuses_the_whole_completion(tmp_path: Path) -> None:
    store = make_store(tmp_path)
    store.create_plan("Ship", ["build"])
    record_tool_call(store.sessions_dir, SESSION, "tu_good")
    done = store.prove_step(
        None, 1, [EvidenceRef("tu_good"), EvidenceRef("tu_ghost")], session_id=SESSION
    )
    assert done.refusal is not None and "tu_ghost" in done.refusal
    assert [c.verdict for c in done.checks] == ["verified", "missing"]
    assert store.get_plan("plan-0001").steps[0].status == "open"


def test_proven_accepted_with_real_evidence_and_the_proof_is_frozen(tmp_path: Path) -> None:
    clock = Clock()
    store = make_store(tmp_path, clock=clock)
    store.create_plan("Ship", ["build", "test"])
    tool_input = {"command": "make   test", "cwd": "/repo"}
    long_result = "PASSED  \n\n" + "x " * 300
    record_tool_call(
        store.sessions_dir, SESSION, "tu_make", name="bash", input=tool_input, result=long_result
    )
    clock.advance(60)
    done = store.prove_step(None, 2, [EvidenceRef("tu_make")], session_id=SESSION)
    assert done.refusal is None and done.status == "proven"

    meta, body = split_frontmatter(_plan_file(tmp_path).read_text())
    assert "2. [proven] test" in body
    canonical = json.dumps(tool_input, sort_keys=True, separators=(",", ":"))
    assert meta["proofs"] == {
        "2": [
            {
                "toolUseId": "tu_make",
                "sessionId": SESSION,
                "toolName": "bash",
                "inputHash": "sha256:" + hashlib.sha256(canonical.encode()).hexdigest(),
                "resultDigest": result_digest(long_result),
                "verifiedAt": "2026-03-01T09:31:00.000Z",
            }
        ]
    }
    digest = meta["proofs"]["2"][0]["resultDigest"]
    assert len(digest) == 240 and digest.endswith("…") and digest.startswith("PASSED x x")
    assert meta["updatedAt"] == "2026-03-01T09:31:00.000Z"


def test_proving_twice_with_the_same_tool_use_freezes_it_once(tmp_path: Path) -> None:
    store = make_store(tmp_path)
    store.create_plan("Ship", ["build"])
    record_tool_call(store.sessions_dir, SESSION, "tu_make")
    store.prove_step(None, 1, [EvidenceRef("tu_make")], session_id=SESSION)
    store.prove_step(None, 1, [EvidenceRef("tu_make")], session_id=SESSION)
    assert len(store.get_plan("plan-0001").proofs[1]) == 1


def test_evidence_session_prefers_the_citation_then_the_calling_session(tmp_path: Path) -> None:
    store = make_store(tmp_path)
    store.create_plan("Ship", ["build", "test"])
    record_tool_call(store.sessions_dir, OTHER_SESSION, "tu_old")
    # Only in the other session: the calling session alone does not find it ...
    assert store.prove_step(None, 1, [EvidenceRef("tu_old")], session_id=SESSION).refusal
    # ... but citing its session does.
    done = store.prove_step(None, 1, [EvidenceRef("tu_old", OTHER_SESSION)], session_id=SESSION)
    assert done.refusal is None and done.checks[0].session_id == OTHER_SESSION


def test_without_any_session_the_hint_says_to_cite_the_session(tmp_path: Path) -> None:
    store = make_store(tmp_path)
    store.create_plan("Ship", ["build"])
    done = store.prove_step(None, 1, [EvidenceRef("tu_x")], session_id=None)
    assert done.refusal is not None and "cite {toolUseId, sessionId}" in done.refusal


def test_evidence_in_a_child_session_is_found(tmp_path: Path) -> None:
    store = make_store(tmp_path)
    store.create_plan("Ship", ["build"])
    SessionLog(store.sessions_dir, SESSION).append(
        "sub_agent_start", {"childSessionId": OTHER_SESSION, "name": "helper"}
    )
    record_tool_call(store.sessions_dir, OTHER_SESSION, "tu_child")
    done = store.prove_step(None, 1, [EvidenceRef("tu_child")], session_id=SESSION)
    assert done.refusal is None


def test_proving_pins_the_cited_sessions_and_keeps_other_keys(tmp_path: Path) -> None:
    store = make_store(tmp_path)
    retention = store.layout.retention_file
    retention.parent.mkdir(parents=True, exist_ok=True)
    retention.write_text(
        json.dumps({"version": 1, "pins": ["sess_aaaaaaaaaaaaaaaa"], "owner": "ops"})
    )
    store.create_plan("Ship", ["build", "test"])
    record_tool_call(store.sessions_dir, SESSION, "tu_a")
    record_tool_call(store.sessions_dir, OTHER_SESSION, "tu_b")
    store.prove_step(None, 1, [EvidenceRef("tu_a")], session_id=SESSION)
    store.prove_step(
        None, 2, [EvidenceRef("tu_b", OTHER_SESSION), EvidenceRef("tu_a")], session_id=SESSION
    )
    data = json.loads(retention.read_text())
    assert data["owner"] == "ops" and data["version"] == 1
    assert data["pins"] == ["sess_aaaaaaaaaaaaaaaa", SESSION, OTHER_SESSION]
    assert read_pins(retention, root=store.root) == data["pins"]
    assert retention.stat().st_mode & 0o777 == 0o600


def test_a_corrupt_retention_file_refuses_the_proof_and_is_left_alone(tmp_path: Path) -> None:
    store = make_store(tmp_path)
    retention = store.layout.retention_file
    retention.parent.mkdir(parents=True, exist_ok=True)
    retention.write_text("{not json")
    store.create_plan("Ship", ["build"])
    record_tool_call(store.sessions_dir, SESSION, "tu_a")
    with pytest.raises(StoreError, match="retention.json"):
        store.prove_step(None, 1, [EvidenceRef("tu_a")], session_id=SESSION)
    assert retention.read_text() == "{not json"
    assert store.get_plan("plan-0001").steps[0].status == "open"


# ── proof: require ───────────────────────────────────────────────────────────────────────────


def test_require_mode_refuses_claimed(tmp_path: Path) -> None:
    store = make_store(tmp_path, proof_mode="require")
    store.create_plan("Ship", ["build"])
    with pytest.raises(StoreError, match='"require".*PlanComplete'):
        store.set_step_status(None, 1, "claimed")
    assert store.get_plan("plan-0001").steps[0].status == "open"
    store.set_step_status(None, 1, "in_progress")  # the rest of the ladder still works


def test_require_mode_completes_only_with_verified_evidence(tmp_path: Path) -> None:
    store = make_store(tmp_path, proof_mode="require")
    store.create_plan("Ship", ["build"])
    with pytest.raises(StoreError, match="needs evidence"):
        store.prove_step(None, 1, [], session_id=SESSION)
    assert store.prove_step(None, 1, [EvidenceRef("tu_x")], session_id=SESSION).refusal
    record_tool_call(store.sessions_dir, SESSION, "tu_x")
    assert store.prove_step(None, 1, [EvidenceRef("tu_x")], session_id=SESSION).status == ("proven")


def test_require_mode_applies_to_goals(tmp_path: Path) -> None:
    store = make_store(tmp_path, proof_mode="require")
    goal = store.write_goal("Ten users", target=10)
    with pytest.raises(StoreError, match='"require"'):
        store.update_goal(goal.id, status="claimed")
    with pytest.raises(StoreError, match="needs evidence"):
        store.update_goal(goal.id, status="proven")
    assert store.get_goal(goal.id).status == "open"


# ── proof: off ───────────────────────────────────────────────────────────────────────────────


def test_off_mode_completes_without_evidence_as_done(tmp_path: Path) -> None:
    store = make_store(tmp_path, proof_mode="off")
    store.create_plan("Ship", ["build"])
    done = store.prove_step(None, 1, [], session_id=SESSION)
    assert done.status == "done" and done.refusal is None and done.checks == ()
    plan = store.get_plan("plan-0001")
    assert plan.steps[0].status == "done" and not plan.proofs
    assert "1. [done] build" in _plan_file(tmp_path).read_text()


def test_off_mode_records_cited_evidence_unverified(tmp_path: Path) -> None:
    store = make_store(tmp_path, proof_mode="off")
    store.create_plan("Ship", ["build"])
    # tu_ghost is in no log: under proof off it is recorded as given, never checked.
    store.prove_step(None, 1, [EvidenceRef("tu_ghost")], session_id=SESSION)
    meta, _ = split_frontmatter(_plan_file(tmp_path).read_text())
    assert "proofs" not in meta
    assert meta["citations"] == {
        "1": [
            {
                "toolUseId": "tu_ghost",
                "sessionId": SESSION,
                "recordedAt": "2026-03-01T09:30:00.000Z",
                "verified": False,
            }
        ]
    }
    assert not store.layout.retention_file.exists()


def test_off_mode_goal_proven_becomes_done(tmp_path: Path) -> None:
    store = make_store(tmp_path, proof_mode="off")
    goal = store.write_goal("Ten users")
    change = store.update_goal(goal.id, status="proven")
    assert change.goal.status == "done" and change.refusal is None


# ── goals follow the ladder ──────────────────────────────────────────────────────────────────


def test_goal_proven_needs_verified_evidence(tmp_path: Path) -> None:
    store = make_store(tmp_path)
    goal = store.write_goal("Ten users", target=10, unit="users")
    assert store.update_goal(goal.id, status="claimed").goal.status == "claimed"
    refused = store.update_goal(
        goal.id, status="proven", evidence=[EvidenceRef("tu_no")], session_id=SESSION
    )
    assert refused.refusal is not None and store.get_goal(goal.id).status == "claimed"
    record_tool_call(store.sessions_dir, SESSION, "tu_count", name="sql", result="10")
    change = store.update_goal(
        goal.id, status="proven", evidence=[EvidenceRef("tu_count")], session_id=SESSION
    )
    assert change.refusal is None
    saved = store.get_goal(goal.id)
    assert saved.status == "proven"
    assert [(p.tool_use_id, p.tool_name, p.result_digest) for p in saved.proofs] == [
        ("tu_count", "sql", "10")
    ]
    assert read_pins(store.layout.retention_file, root=store.root) == [SESSION]


def test_goal_evidence_without_proven_is_refused(tmp_path: Path) -> None:
    store = make_store(tmp_path)
    goal = store.write_goal("Ten users")
    with pytest.raises(StoreError, match="only used with status"):
        store.update_goal(goal.id, current=3, evidence=[EvidenceRef("tu_x")])
