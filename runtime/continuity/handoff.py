"""``handoff.md``: a pure, deterministic render of the stores for the next session.

Same state in, same bytes out: no clock, no randomness. Sections: Focus (a pointer to focus.md
when a person wrote it), Active plan (with ``P/N steps proven`` and each step's proofs, or what
is wrong with its file), Other open plans and Unreadable plans (only when there are some), Goals
(open goals), Unresolved requirements (open ledger entries), Next actions (at most 5, from the
active plan: claimed → ``Verify or redo``, in_progress → ``Continue``, open → ``Do``), Last
session.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from specwire.runtime.continuity.goals import Goal
from specwire.runtime.continuity.ledger import Requirement
from specwire.runtime.continuity.plans import Plan, UnreadablePlan, render_status
from specwire.runtime.continuity.tail import goal_line
from specwire.runtime.core.lazy_dataclass import lazy_methods_dataclass
from specwire.runtime.core.seams import LedgerEntry, StopReason

HANDOFF_MARKER = "<!-- specwire:handoff -->"
MAX_NEXT_ACTIONS = 5
NONE = "_none_"
BY_A_PERSON = "_written by a person: see focus.md_"
_NEXT_VERBS = (("claimed", "Verify or redo"), ("in_progress", "Continue"), ("open", "Do"))


@lazy_methods_dataclass(frozen=True)
class HandoffView:
    """What the handoff note is rendered from."""

    focus: str
    active_plan: Plan | UnreadablePlan | None
    other_plans: Sequence[Plan]
    goals: Sequence[Goal]
    requirements: Sequence[Requirement]
    # Requirements handed in at teardown that are not (yet) in the ledger.
    session_requirements: Sequence[LedgerEntry]
    last_session_id: str | None
    stop_reason: StopReason | None
    # Plan files other than the active one that do not parse.
    unreadable_plans: Sequence[UnreadablePlan] = ()
    # focus.md has no specwire marker: a person wrote it (its text is not copied here).
    focus_by_person: bool = False


def plan_summary(plan: Plan) -> str:
    done = f", {plan.done_count} done unverified" if plan.done_count else ""
    return f"{plan.id} — {plan.title} ({plan.proven_count}/{len(plan.steps)} steps proven{done})"


def plan_detail_lines(plan: Plan) -> list[str]:
    lines = [plan_summary(plan)]
    for number, step in enumerate(plan.steps, start=1):
        line = f"{number}. [{render_status(step.status)}] {step.text}"
        proofs = plan.proofs.get(number, ()) if step.status == "proven" else ()
        if proofs:
            line += " — proof: " + ", ".join(f"{p.tool_use_id} ({p.session_id})" for p in proofs)
        lines.append(line)
    if not plan.steps:
        lines.append("_no steps yet_")
    return lines


def next_actions(plan: Plan | None) -> list[str]:
    if plan is None:
        return []
    actions: list[str] = []
    for status, verb in _NEXT_VERBS:
        for number, step in enumerate(plan.steps, start=1):
            if step.status == status:
                actions.append(f"- {verb}: {step.text} ({plan.id} step {number})")
    return actions[:MAX_NEXT_ACTIONS]


def _requirement_lines(view: HandoffView) -> list[str]:
    lines = [
        f"- {r.id} {json.dumps(r.text, ensure_ascii=False)} ({r.role}, {r.session_id}, "
        f"turn {r.turn})"
        for r in view.requirements
        if r.status == "open"
    ]
    known = {r.text for r in view.requirements}
    for entry in view.session_requirements:
        if entry.role == "user" and entry.text.strip() and entry.text not in known:
            known.add(entry.text)
            quoted = json.dumps(entry.text, ensure_ascii=False)
            lines.append(f"- {quoted} ({entry.role}, {entry.session_id}, turn {entry.turn})")
    return lines


def render_handoff(view: HandoffView) -> str:
    focus = BY_A_PERSON if view.focus_by_person else view.focus.strip() or "_no focus set_"
    out = [HANDOFF_MARKER, "# Handoff", "", "## Focus", focus]
    out += ["", "## Active plan"]
    active = view.active_plan
    if isinstance(active, UnreadablePlan):
        out.append(active.describe())
        active = None
    else:
        out += plan_detail_lines(active) if active else [NONE]
    others = [p for p in view.other_plans if p.is_open]
    if others:
        out += ["", "## Other open plans", *(f"- {plan_summary(p)}" for p in others)]
    if view.unreadable_plans:
        out += ["", "## Unreadable plans", *(f"- {u.describe()}" for u in view.unreadable_plans)]
    goals = [goal_line(g) for g in view.goals if g.is_open]
    out += ["", "## Goals", *(goals or [NONE])]
    reqs = _requirement_lines(view)
    out += ["", "## Unresolved requirements", *(reqs or [NONE])]
    actions = next_actions(active)
    out += ["", "## Next actions", *(actions or [NONE])]
    if view.last_session_id:
        stop = f" (stop: {view.stop_reason})" if view.stop_reason else ""
        last = f"{view.last_session_id}{stop}"
    else:
        last = "_unknown_"
    out += ["", "## Last session", last]
    return "\n".join(out) + "\n"


def is_handoff(text: str) -> bool:
    return text.lstrip("\ufeff").split("\n", 1)[0].strip() == HANDOFF_MARKER
