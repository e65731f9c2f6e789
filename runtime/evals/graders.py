"""The five continuity graders. Pure functions of a sample's transcripts and proven steps.

"Covers" is ``runtime.evals.tokens.covers``: at least 60% of the target's distinct non-stop-word
tokens are in the source (one source at a time, never several pooled).

- **re-ask rate** = re-asked questions / questions. A question is a sentence of an agent reply
  ending in ``?``; it is re-asked when one earlier user message (any earlier session, or an
  earlier turn of its own) covers it. Requirements are user messages too (a scenario's
  requirements must be stated in one), so a question covered by a requirement is re-asked.
- **requirement retention** = visible pairs / pairs, over each (requirement, session after the
  one that first stated it): visible when one line of the memory blocks injected into that
  session's prompt (recalled memory, handoff note with its ledger, plan tail; at the start or
  refreshed mid-session) covers the requirement.
- **proof honesty** = backed proven steps / steps marked proven (``runtime.evals.proofs``);
  ``unbacked`` counts the proven steps whose evidence the host never recorded.
- **pick-up success** = samples whose pick-up session's first action (its first tool call, else
  its first reply) covers the pending step's words that the session's first user message did
  not already say / samples. A plan tool's call that names a step by number (``{"step": 2}``)
  targets that step's text in the sample's plans.
- **cost per proven outcome** = tokens of every turn (input + output, as recorded in the
  ``assistant_message`` events) / backed proven steps; no proven step, no figure.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from specwire.runtime.evals.proofs import ProvenStep
from specwire.runtime.evals.scenario import Pickup
from specwire.runtime.evals.tokens import COVER_THRESHOLD, coverage, covered_by_any, covers, terms
from specwire.runtime.evals.transcript import SessionTranscript

_QUESTION = re.compile(r"[^.!?\n]*\?")


@dataclass(frozen=True)
class Ratio:
    hits: int = 0
    total: int = 0

    @property
    def value(self) -> float | None:
        return self.hits / self.total if self.total else None

    def __add__(self, other: Ratio) -> Ratio:
        return Ratio(self.hits + other.hits, self.total + other.total)


@dataclass(frozen=True)
class Grades:
    reask: Ratio = Ratio()
    retention: Ratio = Ratio()
    proof_honesty: Ratio = Ratio()
    unbacked: int = 0
    expected_proven: Ratio = Ratio()
    pickup: Ratio = Ratio()
    tokens: int = 0
    proven: int = 0  # backed proven steps

    @property
    def cost_per_proven(self) -> float | None:
        return self.tokens / self.proven if self.proven else None

    def __add__(self, other: Grades) -> Grades:
        return Grades(
            self.reask + other.reask,
            self.retention + other.retention,
            self.proof_honesty + other.proof_honesty,
            self.unbacked + other.unbacked,
            self.expected_proven + other.expected_proven,
            self.pickup + other.pickup,
            self.tokens + other.tokens,
            self.proven + other.proven,
        )


def questions(text: str) -> list[str]:
    """The sentences of ``text`` that end in a question mark."""
    return [q.strip() for q in _QUESTION.findall(text) if q.strip() != "?"]


def reask_rate(sessions: Sequence[SessionTranscript]) -> Ratio:
    said = [u for s in sessions for u in s.user]
    asked = reasked = 0
    for session in sessions:
        for reply in session.replies:
            earlier = [u.text for u in said if (u.session, u.turn) < (reply.session, reply.turn)]
            for question in questions(reply.text):
                asked += 1
                reasked += covered_by_any(earlier, question)
    return Ratio(reasked, asked)


def requirement_retention(
    sessions: Sequence[SessionTranscript], requirements: Sequence[str]
) -> Ratio:
    visible = pairs = 0
    for requirement in requirements:
        stated = next(
            (u.session for s in sessions for u in s.user if covers(u.text, requirement)), None
        )
        if stated is None:
            continue
        for session in sessions:
            if session.index > stated:
                pairs += 1
                visible += covered_by_any(session.memory_lines, requirement)
    return Ratio(visible, pairs)


@dataclass(frozen=True)
class PlanStep:
    plan_id: str
    number: int
    text: str


def picked_up(
    sessions: Sequence[SessionTranscript],
    pickup: Pickup | None,
    plan_steps: Sequence[PlanStep] = (),
) -> Ratio:
    if pickup is None:
        return Ratio()
    session = next((s for s in sessions if s.index == pickup.session), None)
    if session is None or session.first_action is None or not session.user:
        return Ratio(0, 1)
    action = session.first_action
    wanted = terms(pickup.step) - terms(session.user[0].text)
    texts = [action.text]
    if action.step is not None:
        texts += [
            step.text
            for step in plan_steps
            if step.number == action.step and action.plan_id in (None, step.plan_id)
        ]
    found = any(coverage(wanted, terms(text)) >= COVER_THRESHOLD for text in texts)
    return Ratio(int(found), 1)


def proof_honesty(steps: Sequence[ProvenStep]) -> Ratio:
    return Ratio(sum(step.backed for step in steps), len(steps))


def expected_proven(steps: Sequence[ProvenStep], expected: Sequence[str]) -> Ratio:
    backed = [step.text for step in steps if step.backed]
    return Ratio(sum(covered_by_any(backed, text) for text in expected), len(expected))


def grade(
    sessions: Sequence[SessionTranscript],
    steps: Sequence[ProvenStep],
    *,
    requirements: Sequence[str] = (),
    pickup: Pickup | None = None,
    proven: Sequence[str] = (),
    plan_steps: Sequence[PlanStep] = (),
) -> Grades:
    """Every grader over one sample."""
    honesty = proof_honesty(steps)
    return Grades(
        reask=reask_rate(sessions),
        retention=requirement_retention(sessions, requirements),
        proof_honesty=honesty,
        unbacked=honesty.total - honesty.hits,
        expected_proven=expected_proven(steps, proven),
        pickup=picked_up(sessions, pickup, plan_steps),
        tokens=sum(s.tokens for s in sessions),
        proven=honesty.hits,
    )
