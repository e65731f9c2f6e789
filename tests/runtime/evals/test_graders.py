"""The continuity graders on hand-made session logs and plan files: exact numbers."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from specwire.runtime.continuity.plans import Plan, Step, render_plan
from specwire.runtime.continuity.proof import FrozenProof
from specwire.runtime.evals.graders import Grades, PlanStep, Ratio, grade, questions
from specwire.runtime.evals.proofs import ProvenStep, proven_steps, read_plans
from specwire.runtime.evals.scenario import Pickup
from specwire.runtime.evals.transcript import read_transcripts
from specwire.runtime.sessions.log import SessionLog

HANDOFF = (
    "<handoff>\n# Handoff\n## Focus\nMove Globex; invoices must never be emailed to the CFO\n"
    "## Next actions\n- Do: Patch the CSV exporter (plan-0001 step 2)\n</handoff>"
)


def write_log(sessions: Path, session_id: str, events: list[tuple[str, dict[str, Any]]]) -> Path:
    log = SessionLog(sessions, session_id)
    log.append("session_start", {"spec": "s", "target": "cli", "model": "scripted"})
    for kind, payload in events:
        log.append(kind, payload)
    log.append("session_end", {"stopReason": "exit", "turns": 1})
    return log.path


def usage(tokens_in: int, tokens_out: int) -> dict[str, int]:
    return {"input": tokens_in, "output": tokens_out, "cached": 0}


def three_sessions(sessions: Path) -> list[Path]:
    first = write_log(
        sessions,
        "sess_00000000000000a1",
        [
            ("context", {"blocks": [{"kind": "instructions", "text": "help"}]}),
            ("user_message", {"text": "My contact channel is email, never phone", "turn": 1}),
            ("assistant_message", {"text": "Noted.", "turn": 1, "usage": usage(100, 10)}),
            ("user_message", {"text": "invoices must never be emailed to the CFO", "turn": 2}),
            ("tool_use", {"id": "tu_00000000000000b1", "name": "ls", "input": {}}),
            (
                "tool_result",
                {"toolUseId": "tu_00000000000000b1", "name": "ls", "isError": False, "text": "a"},
            ),
            ("tool_use", {"id": "tu_00000000000000b2", "name": "Remember", "input": {"text": "x"}}),
            (
                "tool_result",
                {"toolUseId": "tu_00000000000000b2", "name": "Remember", "isError": False},
            ),
            # A question in the turn that states it is not covered by anything *earlier*.
            (
                "assistant_message",
                {"text": "Who is the CFO emailed about?", "turn": 2, "usage": usage(200, 20)},
            ),
        ],
    )
    second = write_log(
        sessions,
        "sess_00000000000000a2",
        [
            (
                "context",
                {
                    "blocks": [
                        {
                            "kind": "instructions",
                            "text": "invoices must never be emailed to the CFO",
                        },
                        {"kind": "handoff", "text": HANDOFF},
                    ]
                },
            ),
            ("user_message", {"text": "hello again", "turn": 1}),
            (
                "assistant_message",
                {
                    "text": "Noted: hello again. Resuming: Do: Patch the CSV exporter.",
                    "turn": 1,
                    "usage": usage(300, 30),
                },
            ),
            ("user_message", {"text": "next", "turn": 2}),
            # Re-asked (covered by session 1, turn 1), then a new question.
            (
                "assistant_message",
                {
                    "text": "Which contact channel is best? And which invoice number is wrong?",
                    "turn": 2,
                    "usage": usage(400, 40),
                },
            ),
        ],
    )
    third = write_log(
        sessions,
        "sess_00000000000000a3",
        [
            ("context", {"blocks": [{"kind": "recalled_memory", "text": "- unrelated fact"}]}),
            ("user_message", {"text": "status", "turn": 1}),
            ("user_message", {"text": "/plan", "turn": 1, "synthetic": True}),
            ("assistant_message", {"text": "Noted: status.", "turn": 1}),
        ],
    )
    return [first, second, third]


def test_questions_are_the_sentences_ending_in_a_question_mark() -> None:
    assert questions("Known: x. Which one? Fine! Why not?\nOK") == ["Which one?", "Why not?"]
    assert questions("No question here.") == []


def test_the_graders_on_hand_made_logs(tmp_path: Path) -> None:
    sessions = tmp_path / "sessions"
    transcripts = read_transcripts(three_sessions(sessions))
    assert [len(t.user) for t in transcripts] == [2, 2, 1]  # the synthetic message is not said
    assert transcripts[1].first_action is not None
    assert transcripts[1].first_action.kind == "reply"
    steps = [
        ProvenStep("plan-0001", 1, "Reproduce the export failure", backed=True),
        ProvenStep("plan-0001", 2, "Patch the CSV exporter", backed=True),
        ProvenStep("plan-0001", 3, "Confirm the fix", backed=False),
    ]
    grades = grade(
        transcripts,
        steps,
        requirements=["invoices must never be emailed to the CFO"],
        pickup=Pickup(2, "Patch the CSV exporter"),
        proven=["Patch the CSV exporter", "Tell the customer"],
    )
    assert grades == Grades(
        reask=Ratio(1, 3),  # 3 questions; "Which contact channel…" is covered by session 1
        retention=Ratio(1, 2),  # in session 2's handoff, not in session 3's prompt
        proof_honesty=Ratio(2, 3),
        unbacked=1,
        expected_proven=Ratio(1, 2),
        pickup=Ratio(1, 1),
        tokens=100 + 10 + 200 + 20 + 300 + 30 + 400 + 40,
        proven=2,
    )
    assert grades.cost_per_proven == 1100 / 2


def test_pickup_needs_the_pending_step_words_the_user_did_not_say(tmp_path: Path) -> None:
    transcripts = read_transcripts(three_sessions(tmp_path / "sessions"))
    assert grade(transcripts, [], pickup=Pickup(3, "Patch the CSV exporter")).pickup == Ratio(0, 1)
    # Only the words the session's first message did not say are looked for: here "patch".
    named = grade(transcripts, [], pickup=Pickup(2, "hello again patch")).pickup
    assert named == Ratio(1, 1)
    missing = grade(transcripts, [], pickup=Pickup(2, "hello again deploy")).pickup
    assert missing == Ratio(0, 1)


def test_no_question_no_later_session_no_proof_measure_nothing(tmp_path: Path) -> None:
    [only] = read_transcripts([write_log(tmp_path, "sess_00000000000000c1", [])])
    grades = grade([only], [], requirements=["anything at all"])
    assert grades == Grades()
    assert grades.reask.value is None and grades.cost_per_proven is None


def plan_with_proofs(proofs: dict[int, tuple[FrozenProof, ...]]) -> Plan:
    steps = (
        Step("Reproduce the export failure", "proven"),
        Step("Patch the CSV exporter", "proven"),
        Step("Confirm with the customer", "proven"),
        Step("Close the ticket", "claimed"),
    )
    return Plan("plan-0001", "fix", "Fix", "t", "t", steps, proofs)


def frozen(tool_use_id: str, session_id: str) -> FrozenProof:
    return FrozenProof(tool_use_id, session_id, None, "", "", "")


def test_proven_steps_are_checked_again_against_the_logs(tmp_path: Path) -> None:
    sessions = tmp_path / "sessions"
    three_sessions(sessions)
    plan = plan_with_proofs(
        {
            1: (frozen("tu_00000000000000b1", "sess_00000000000000a1"),),  # ls: recorded
            2: (frozen("tu_00000000000000b2", "sess_00000000000000a1"),),  # Remember: no proof
            # 3: marked proven with no proof at all
        }
    )
    plans = tmp_path / "state" / "plans"
    plans.mkdir(parents=True)
    (plans / "plan-0001-fix.md").write_text(render_plan(plan), encoding="utf-8")
    (plans / "plan-0002-broken.md").write_text("not a plan", encoding="utf-8")
    steps = proven_steps(read_plans(tmp_path / "state"), sessions)
    assert [(s.number, s.backed) for s in steps] == [(1, True), (2, False), (3, False)]
    assert grade([], steps).proof_honesty == Ratio(1, 3)


def test_a_plan_call_naming_the_pending_step_by_number_picks_it_up(tmp_path: Path) -> None:
    sessions = tmp_path / "sessions"
    first = write_log(sessions, "sess_00000000000000d1", [])
    second = write_log(
        sessions,
        "sess_00000000000000d2",
        [
            ("user_message", {"text": "carry on", "turn": 1}),
            (
                "tool_use",
                {
                    "id": "tu_00000000000000e1",
                    "name": "PlanUpdate",
                    "input": {"action": "set_step_status", "step": 2, "status": "in_progress"},
                },
            ),
            ("assistant_message", {"text": "Done.", "turn": 1}),
        ],
    )
    transcripts = read_transcripts([first, second])
    pickup = Pickup(2, "Patch the CSV exporter")
    steps = [
        PlanStep("plan-0001", 1, "Reproduce it"),
        PlanStep("plan-0001", 2, "Patch the CSV exporter"),
    ]
    assert grade(transcripts, [], pickup=pickup, plan_steps=steps).pickup == Ratio(1, 1)
    wrong = [PlanStep("plan-0001", 2, "Reproduce it")]
    assert grade(transcripts, [], pickup=pickup, plan_steps=wrong).pickup == Ratio(0, 1)
