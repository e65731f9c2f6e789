"""The volatile tail shown to the model each turn: focus, active plan, open goals, the ledger.

``render_plan_tail`` (None when there is nothing to show)::

    focus: <body>                   (a focus.md a person wrote: "focus (written by a person in
                                     focus.md; read-only):", its text, and a note when cut)

    plan-0001 — <title>             (an unreadable active plan: "plan-0001 (active) is
                                     unreadable: <reason>; fix <path> or move it away")
    1. [open] <step>                (claimed renders as "[claimed — unverified]")

    goals:
    - goal-0001 [open] <title> (<current ?? 0>/<target> <unit>)

``render_continuity_tail`` frames it in ``<current_plan>`` and adds the
``<requirements_ledger>`` block (both through ``runtime.safety.framing``, so stored text cannot
close them); the ledger has priority under the character cap (oldest lines evicted first), and
the plan is cut with ``[plan truncated to fit the tail cap]``.
"""

from __future__ import annotations

from collections.abc import Sequence

from specwire.runtime.continuity.focus import UserFocus
from specwire.runtime.continuity.goals import Goal, progress
from specwire.runtime.continuity.ledger import LEDGER_TRUNCATED, Requirement
from specwire.runtime.continuity.plans import Plan, UnreadablePlan, render_status
from specwire.runtime.safety.framing import frame, neutralize

TAIL_MAX_CHARS = 4096
PLAN_TAG = "current_plan"
PLAN_TRUNCATED = "[plan truncated to fit the tail cap]"
LEDGER_PREAMBLE = (
    "User requirements preserved verbatim before context compaction — they remain binding even "
    "though the original messages were evicted:"
)


def plan_lines(plan: Plan) -> list[str]:
    lines = [f"{plan.id} — {plan.title}"]
    lines += [
        f"{n}. [{render_status(s.status)}] {s.text}" for n, s in enumerate(plan.steps, start=1)
    ]
    return lines


def goal_line(goal: Goal) -> str:
    return f"- {goal.id} [{render_status(goal.status)}] {goal.title}{progress(goal)}"


def user_focus_lines(focus: UserFocus, label: str, name: str) -> list[str]:
    """A person's focus.md under ``label``, with a note when it was cut to the cap."""
    note = focus.note(name)
    return [label, focus.text or "(empty)", *([note] if note else [])]


def render_plan_tail(
    focus: str,
    plan: Plan | UnreadablePlan | None,
    goals: Sequence[Goal],
    *,
    user_focus: UserFocus | None = None,
    focus_name: str = "focus.md",
) -> str | None:
    sections: list[str] = []
    if user_focus is not None and user_focus.text:
        label = f"focus (written by a person in {focus_name}; read-only):"
        sections.append("\n".join(user_focus_lines(user_focus, label, focus_name)))
    elif focus.strip():
        sections.append(f"focus: {focus.strip()}")
    if isinstance(plan, UnreadablePlan):
        sections.append(plan.describe(active=True))
    elif plan is not None:
        sections.append("\n".join(plan_lines(plan)))
    open_goals = [g for g in goals if g.is_open]
    if open_goals:
        sections.append("\n".join(["goals:", *(goal_line(g) for g in open_goals)]))
    return "\n\n".join(sections) if sections else None


def _ledger_block(lines: list[str], truncated: bool) -> str:
    body = ([LEDGER_TRUNCATED] if truncated else []) + lines
    return frame("requirements_ledger", body, LEDGER_PREAMBLE)


def _fit_ledger(reqs: Sequence[Requirement], truncated: bool, max_chars: int) -> str | None:
    lines = [
        neutralize(f"- ({r.role}, turn {r.turn}) {r.text}") for r in reqs if r.status != "dropped"
    ]
    if not lines and not truncated:
        return None
    block = _ledger_block(lines, truncated)
    while len(block) > max_chars and lines:
        lines.pop(0)
        block = _ledger_block(lines, True)
    return block if len(block) <= max_chars else None


def _fit_plan(plan_tail: str, budget: int) -> str | None:
    plan_tail = neutralize(plan_tail)
    block = frame(PLAN_TAG, plan_tail)
    if len(block) <= budget:
        return block
    overhead = len(frame(PLAN_TAG, "\n")) + len(PLAN_TRUNCATED)
    room = budget - overhead
    if room <= 0:
        return None
    return frame(PLAN_TAG, [plan_tail[:room].rstrip(), PLAN_TRUNCATED])


def render_continuity_tail(
    plan_tail: str | None,
    requirements: Sequence[Requirement] = (),
    *,
    ledger_truncated: bool = False,
    max_chars: int = TAIL_MAX_CHARS,
) -> str | None:
    ledger = _fit_ledger(requirements, ledger_truncated, max_chars)
    budget = max_chars - (len(ledger) + 1 if ledger else 0)
    plan = _fit_plan(plan_tail, budget) if plan_tail else None
    blocks = [b for b in (plan, ledger) if b]
    return "\n".join(blocks) if blocks else None
