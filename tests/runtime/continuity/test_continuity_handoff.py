"""The handoff note and the plan / continuity tails: golden strings."""

from __future__ import annotations

from pathlib import Path

import pytest
from continuity_support import OTHER_SESSION, SESSION, make_store, record_tool_call

from specwire.runtime.continuity.ledger import Requirement
from specwire.runtime.continuity.proof import EvidenceRef
from specwire.runtime.continuity.store import ContinuityStore
from specwire.runtime.continuity.tail import render_continuity_tail
from specwire.runtime.core.errors import StoreError
from specwire.runtime.core.seams import HandoffInput, LedgerEntry


def _populated(tmp_path: Path) -> ContinuityStore:
    store = make_store(tmp_path)
    store.write_focus("Finish the release")
    store.create_plan("Release 1.2", ["tag", "build", "notes", "publish", "announce", "blog", "x"])
    store.create_plan("Cleanup", ["delete old branches"])
    store.create_plan("Done already", ["it"])
    store.set_step_status("plan-0001", 2, "claimed")
    store.set_step_status("plan-0001", 3, "in_progress")
    record_tool_call(store.sessions_dir, SESSION, "tu_tag")
    record_tool_call(store.sessions_dir, SESSION, "tu_it")
    store.prove_step("plan-0001", 1, [EvidenceRef("tu_tag")], session_id=SESSION)
    store.prove_step("plan-0003", 1, [EvidenceRef("tu_it")], session_id=SESSION)
    store.write_goal("Ten users", target=10, current=4, unit="users")
    store.write_goal("Docs site")
    store.write_goal("Old goal")
    record_tool_call(store.sessions_dir, SESSION, "tu_old")
    store.update_goal(
        "goal-0003", status="proven", evidence=[EvidenceRef("tu_old")], session_id=SESSION
    )
    store.record_requirements(
        [LedgerEntry("user", "Never force-push", SESSION, 2), LedgerEntry("user", "Ok", SESSION, 3)]
    )
    store.set_requirement_status("REQ-002", "confirmed", "Ok")
    return store


def test_handoff_golden(tmp_path: Path) -> None:
    store = _populated(tmp_path)
    path = store.write_handoff(
        HandoffInput(
            OTHER_SESSION,
            "exit",
            ledger=[
                LedgerEntry("user", "Never force-push", OTHER_SESSION, 9),
                LedgerEntry("user", "Ship by Friday", OTHER_SESSION, 4),
            ],
        )
    )
    expected = (
        "<!-- specwire:handoff -->\n"
        "# Handoff\n"
        "\n"
        "## Focus\n"
        "Finish the release\n"
        "\n"
        "## Active plan\n"
        "plan-0001 — Release 1.2 (1/7 steps proven)\n"
        f"1. [proven] tag — proof: tu_tag ({SESSION})\n"
        "2. [claimed — unverified] build\n"
        "3. [in_progress] notes\n"
        "4. [open] publish\n"
        "5. [open] announce\n"
        "6. [open] blog\n"
        "7. [open] x\n"
        "\n"
        "## Other open plans\n"
        "- plan-0002 — Cleanup (0/1 steps proven)\n"
        "\n"
        "## Goals\n"
        "- goal-0001 [open] Ten users (4/10 users)\n"
        "- goal-0002 [open] Docs site\n"
        "\n"
        "## Unresolved requirements\n"
        f'- REQ-001 "Never force-push" (user, {SESSION}, turn 2)\n'
        f'- "Ship by Friday" (user, {OTHER_SESSION}, turn 4)\n'
        "\n"
        "## Next actions\n"
        "- Verify or redo: build (plan-0001 step 2)\n"
        "- Continue: notes (plan-0001 step 3)\n"
        "- Do: publish (plan-0001 step 4)\n"
        "- Do: announce (plan-0001 step 5)\n"
        "- Do: blog (plan-0001 step 6)\n"
        "\n"
        "## Last session\n"
        f"{OTHER_SESSION} (stop: exit)\n"
    )
    assert path.read_text() == expected
    assert store.read_handoff() == expected
    # Pure: writing again from the same state gives the same bytes.
    store.write_handoff(
        HandoffInput(
            OTHER_SESSION,
            "exit",
            ledger=[
                LedgerEntry("user", "Never force-push", OTHER_SESSION, 9),
                LedgerEntry("user", "Ship by Friday", OTHER_SESSION, 4),
            ],
        )
    )
    assert path.read_text() == expected


def test_handoff_of_an_empty_store(tmp_path: Path) -> None:
    store = make_store(tmp_path)
    assert store.write_handoff(HandoffInput(SESSION, "complete")).read_text() == (
        "<!-- specwire:handoff -->\n# Handoff\n\n## Focus\n_no focus set_\n"
        "\n## Active plan\n_none_\n"
        "\n## Goals\n_none_\n\n## Unresolved requirements\n_none_\n\n## Next actions\n_none_\n"
        f"\n## Last session\n{SESSION} (stop: complete)\n"
    )


def test_a_user_authored_handoff_is_not_overwritten_nor_loaded(tmp_path: Path) -> None:
    store = make_store(tmp_path)
    store.handoff_path.parent.mkdir(parents=True)
    store.handoff_path.write_text("my notes\n")
    with pytest.raises(StoreError, match="user-authored"):
        store.write_handoff(HandoffInput(SESSION, "exit"))
    assert store.handoff_path.read_text() == "my notes\n"
    assert store.read_handoff() is None


def test_plan_tail_golden(tmp_path: Path) -> None:
    store = _populated(tmp_path)
    assert store.render_plan_tail() == (
        "focus: Finish the release\n"
        "\n"
        "plan-0001 — Release 1.2\n"
        "1. [proven] tag\n"
        "2. [claimed — unverified] build\n"
        "3. [in_progress] notes\n"
        "4. [open] publish\n"
        "5. [open] announce\n"
        "6. [open] blog\n"
        "7. [open] x\n"
        "\n"
        "goals:\n"
        "- goal-0001 [open] Ten users (4/10 users)\n"
        "- goal-0002 [open] Docs site"
    )
    assert store.render_plan_tail(include_plans=False) == "focus: Finish the release"


def test_plan_tail_is_none_when_empty(tmp_path: Path) -> None:
    assert make_store(tmp_path).render_plan_tail() is None


def test_continuity_tail_with_the_ledger(tmp_path: Path) -> None:
    store = make_store(tmp_path)
    store.write_focus("f")
    store.record_requirements([LedgerEntry("user", "Use tabs", SESSION, 4)])
    store.record_requirements([LedgerEntry("user", "Dropped one", SESSION, 5)])
    store.set_requirement_status("REQ-002", "dropped", "Dropped one")
    assert store.render_continuity_tail() == (
        "<current_plan>\nfocus: f\n</current_plan>\n"
        "<requirements_ledger>\n"
        "User requirements preserved verbatim before context compaction — they remain binding "
        "even though the original messages were evicted:\n"
        "- (user, turn 4) Use tabs\n"
        "</requirements_ledger>"
    )
    assert store.render_continuity_tail(include_ledger=False) == (
        "<current_plan>\nfocus: f\n</current_plan>"
    )


def test_continuity_tail_cap_keeps_the_ledger_and_truncates_the_plan() -> None:
    reqs = [
        Requirement(f"REQ-00{n}", "open", f"req {n} " + "r" * 40, "user", SESSION, n)
        for n in range(1, 6)
    ]
    plan = "plan-0001 — big\n" + "\n".join(f"{n}. [open] step {n}" for n in range(1, 100))
    tail = render_continuity_tail(plan, reqs, max_chars=600)
    assert tail is not None and len(tail) <= 600
    assert "[plan truncated to fit the tail cap]\n</current_plan>" in tail
    assert "- (user, turn 5) req 5" in tail  # the ledger has priority

    tiny = render_continuity_tail(None, reqs, max_chars=300)
    assert tiny is not None and len(tiny) <= 300
    assert "[ledger truncated]" in tiny and "req 5" in tiny and "req 1 " not in tiny


@pytest.mark.parametrize(
    "change",
    [
        {"title": "ship\x00"},
        {"title": "ship", "unit": "users\x00"},
        {"goal": True, "title": "renamed\x00"},
        {"goal": True, "unit": "\x00"},
    ],
)
def test_a_goal_with_a_nul_is_refused_and_the_handoff_is_still_written(
    tmp_path: Path, change: dict[str, object]
) -> None:
    """A NUL in a goal (a hostile model's GoalWrite) reached the handoff raw: on PostgreSQL no
    handoff of the conversation could be written again, nor the dream's continuity step."""
    store = make_store(tmp_path)
    goal = store.write_goal("Ten users", target=10, unit="users")
    with pytest.raises(StoreError, match="NUL"):
        if change.get("goal"):
            store.update_goal(goal.id, title=change.get("title"), unit=change.get("unit"))  # type: ignore[arg-type]
        else:
            store.write_goal(str(change["title"]), unit=change.get("unit"))  # type: ignore[arg-type]
    assert [(g.title, g.unit) for g in store.list_goals()] == [("Ten users", "users")]
    handoff = store.write_handoff(HandoffInput(SESSION, "exit")).read_bytes()
    assert b"Ten users" in handoff and b"\x00" not in handoff
