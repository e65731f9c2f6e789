"""The continuity tools: FocusRead, FocusWrite, PlanRead, PlanUpdate, PlanComplete, GoalWrite,
GoalUpdate, GoalList, MemoryClear (in that order; without plans only FocusRead, FocusWrite,
MemoryClear).

Handlers run under the one tool error guard (``runtime.core.tool_types.guarded``): a ``StoreError``
becomes an error result with the store's message, a tenancy fence or an OS error a short
refusal. Events go out through ``ctx.emit``: ``plan_update``, ``goal_update``, and one
``action_proof`` per cited tool use, rejected citations included.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from specwire.runtime.continuity.focus import FocusDoc
from specwire.runtime.continuity.handoff import plan_detail_lines, plan_summary
from specwire.runtime.continuity.plan_book import NO_ACTIVE_PLAN
from specwire.runtime.continuity.plans import Plan, UnreadablePlan, plan_number
from specwire.runtime.continuity.proof import EvidenceRef, ProofCheck
from specwire.runtime.continuity.store import ContinuityStore
from specwire.runtime.continuity.tail import goal_line, user_focus_lines
from specwire.runtime.core.fragment import CONTINUITY_TOOL_NAMES, ProofMode
from specwire.runtime.core.tool_types import (
    LazyInput,
    Tool,
    ToolContext,
    ToolResult,
    ToolTable,
    tools_from_table,
)
from specwire.runtime.safety.screening import screened

if TYPE_CHECKING:
    from specwire.runtime.continuity.inputs import (
        EvidenceRefInput,
        FocusReadInput,
        FocusWriteInput,
        GoalListInput,
        GoalUpdateInput,
        GoalWriteInput,
        MemoryClearInput,
        PlanCompleteInput,
        PlanCompleteUnverifiedInput,
        PlanReadInput,
        PlanUpdateInput,
    )

TOOL_NAMES = CONTINUITY_TOOL_NAMES
FOCUS_ONLY_TOOL_NAMES: tuple[str, ...] = ("FocusRead", "FocusWrite", "MemoryClear")


def _input(name: str) -> LazyInput:
    """An input model of ``continuity.inputs``, imported (with pydantic) on the first call."""
    return LazyInput("specwire.runtime.continuity.inputs", name)


def _refs(evidence: Sequence[EvidenceRefInput] | None) -> list[EvidenceRef]:
    return [EvidenceRef(e.toolUseId, e.sessionId) for e in evidence or ()]


def _emit_checks(ctx: ToolContext, checks: Sequence[ProofCheck], **where: Any) -> None:
    for check in checks:
        ctx.emit(
            "action_proof",
            {**where, "toolUseId": check.ref.tool_use_id, "verdict": check.verdict},
        )


def _plan_entry(plan: Plan | UnreadablePlan) -> str:
    return plan.describe() if isinstance(plan, UnreadablePlan) else plan_summary(plan)


def _proof_note(checks: Sequence[ProofCheck]) -> str:
    cited = ", ".join(f"{c.ref.tool_use_id} in {c.session_id}" for c in checks)
    return f" (verified: {cited})" if cited else ""


class _Handlers:
    def __init__(self, store: ContinuityStore, proof_mode: ProofMode) -> None:
        self.store = store
        self.proof_mode = proof_mode

    # ── focus ───────────────────────────────────────────────────────────────────────────────

    def focus_read(self, _: FocusReadInput, ctx: ToolContext) -> ToolResult:
        view = self.store.focus_view()
        name = self.store.focus_path.name
        if isinstance(view, FocusDoc):
            lines = [f"focus: {view.body or '(no focus set)'}"]
        else:  # a person wrote focus.md: show it, and say it is theirs
            label = (
                f"focus (written by a person in {name}; read-only to you — FocusWrite cannot "
                "change it):"
            )
            lines = user_focus_lines(view, label, name)
        active = self.store.active_plan_state()
        if isinstance(active, UnreadablePlan):
            lines.append(f"active plan: {active.describe()}")
        else:
            lines.append(f"active plan: {plan_summary(active) if active else 'none'}")
        open_reqs = (
            [r for r in view.requirements if r.status == "open"]
            if isinstance(view, FocusDoc)
            else []
        )
        if open_reqs:
            lines += ["", "open requirements (the user's own words; still binding):"]
            lines += [f"- {r.id} (turn {r.turn}) {r.text}" for r in open_reqs]
        return ToolResult("\n".join(lines))

    def focus_write(self, parsed: FocusWriteInput, ctx: ToolContext) -> ToolResult:
        doc = self.store.write_focus(parsed.focus)
        return ToolResult(f"focus updated ({len(doc.body)} chars)")

    # ── plans ───────────────────────────────────────────────────────────────────────────────

    def plan_read(self, parsed: PlanReadInput, ctx: ToolContext) -> ToolResult:
        plans, unreadable = self.store.scan_plans()
        if not plans and not unreadable:
            return ToolResult("no plans yet — create one with PlanUpdate {action: 'create'}.")
        active_id = self.store.active_plan_id()
        wanted = parsed.planId or active_id
        lines: list[str] = []
        if wanted is None:
            lines.append(NO_ACTIVE_PLAN)
        else:
            broken = next((u for u in unreadable if u.id == wanted), None)
            if broken is not None:
                lines.append(broken.describe(active=wanted == active_id))
            else:
                found = next((p for p in plans if p.id == wanted), None)
                plan = found if found is not None else self.store.get_plan(wanted)
                detail = plan_detail_lines(plan)
                if plan.id == active_id:
                    detail[0] += " — active"
                lines += detail
        others: list[Plan | UnreadablePlan] = [p for p in plans if p.id != wanted]
        others += [u for u in unreadable if u.id != wanted]
        others.sort(key=lambda p: plan_number(p.id))
        if others:
            lines += ["", "other plans:", *(f"- {_plan_entry(p)}" for p in others)]
        return ToolResult("\n".join(lines))

    def plan_update(self, parsed: PlanUpdateInput, ctx: ToolContext) -> ToolResult:
        store = self.store
        if parsed.action == "create":
            assert parsed.title is not None
            plan, active = store.create_plan(parsed.title, parsed.steps or ())
            ctx.emit("plan_update", {"planId": plan.id, "action": "create", "title": plan.title})
            note = "; it is the active plan" if active else ""
            current = None if active else store.active_plan_state()
            if isinstance(current, UnreadablePlan):
                note = (
                    f"; {current.id} stays active but is unreadable: {current.reason}; "
                    f"fix {current.path} or move it away"
                )
            return ToolResult(f"created {plan.id} — {plan.title} ({len(plan.steps)} step(s)){note}")
        if parsed.action == "add_step":
            assert parsed.text is not None
            plan, number = store.add_step(parsed.planId, parsed.text)
            ctx.emit("plan_update", {"planId": plan.id, "action": "add_step", "step": number})
            return ToolResult(f"{plan.id} step {number} added: {plan.steps[number - 1].text}")
        if parsed.action == "set_step_status":
            assert parsed.step is not None and parsed.status is not None
            plan = store.set_step_status(parsed.planId, parsed.step, parsed.status)
            ctx.emit(
                "plan_update",
                {
                    "planId": plan.id,
                    "action": "set_step_status",
                    "step": parsed.step,
                    "status": parsed.status,
                },
            )
            if parsed.status == "claimed":
                return ToolResult(
                    f"{plan.id} step {parsed.step} → claimed "
                    "(unverified — prove it with PlanComplete)"
                )
            return ToolResult(f"{plan.id} step {parsed.step} → {parsed.status}")
        assert parsed.planId is not None
        plan = store.set_active(parsed.planId)
        ctx.emit("plan_update", {"planId": plan.id, "action": "set_active", "title": plan.title})
        return ToolResult(f"active plan → {plan_summary(plan)}")

    def plan_complete(
        self, parsed: PlanCompleteInput | PlanCompleteUnverifiedInput, ctx: ToolContext
    ) -> ToolResult:
        done = self.store.prove_step(
            parsed.planId, parsed.step, _refs(parsed.evidence), session_id=ctx.session_id or None
        )
        _emit_checks(ctx, done.checks, planId=done.plan.id, step=done.step)
        if done.refusal is not None:
            return ToolResult(done.refusal, True)
        ctx.emit(
            "plan_update",
            {
                "planId": done.plan.id,
                "action": "prove_step",
                "step": done.step,
                "status": done.status,
            },
        )
        if done.status == "done":
            return ToolResult(
                f"{done.plan.id} step {done.step} → done (proof checking is off: not verified)"
            )
        return ToolResult(f"{done.plan.id} step {done.step} → proven{_proof_note(done.checks)}")

    # ── goals ───────────────────────────────────────────────────────────────────────────────

    def goal_write(self, parsed: GoalWriteInput, ctx: ToolContext) -> ToolResult:
        goal = self.store.write_goal(
            parsed.title, target=parsed.target, current=parsed.current, unit=parsed.unit
        )
        ctx.emit(
            "goal_update",
            {"goalId": goal.id, "action": "create", "title": goal.title, "status": goal.status},
        )
        return ToolResult(f"created {goal_line(goal)[2:]}")

    def goal_update(self, parsed: GoalUpdateInput, ctx: ToolContext) -> ToolResult:
        change = self.store.update_goal(
            parsed.goalId,
            title=parsed.title,
            status=parsed.status,
            target=parsed.target,
            current=parsed.current,
            unit=parsed.unit,
            evidence=_refs(parsed.evidence),
            session_id=ctx.session_id or None,
        )
        _emit_checks(ctx, change.checks, goalId=parsed.goalId)
        if change.refusal is not None:
            return ToolResult(change.refusal, True)
        goal = change.goal
        payload: dict[str, Any] = {"goalId": goal.id, "action": "update", "status": goal.status}
        if parsed.title is not None:
            payload["title"] = goal.title
        ctx.emit("goal_update", payload)
        text = f"updated {goal_line(goal)[2:]}"
        if goal.status == "claimed":
            text += " (unverified — prove it with GoalUpdate {status: 'proven', evidence})"
        elif parsed.status == "proven" and goal.status == "proven":
            text += _proof_note(change.checks)
        elif goal.status == "done":
            text += " (proof checking is off: not verified)"
        return ToolResult(text)

    def goal_list(self, _: GoalListInput, ctx: ToolContext) -> ToolResult:
        goals = self.store.list_goals()
        if not goals:
            return ToolResult("no goals yet — add one with GoalWrite.")
        return ToolResult("\n".join(goal_line(g) for g in goals))

    # ── trash ───────────────────────────────────────────────────────────────────────────────

    def memory_clear(self, parsed: MemoryClearInput, ctx: ToolContext) -> ToolResult:
        result = self.store.clear(parsed.scope)
        if result.snapshot is None:
            return ToolResult(f"nothing to clear: {parsed.scope} is already empty")
        if not self.store.volume.on_files:  # in the database: no folder of this worker holds it
            stamp = result.snapshot.ts
            return ToolResult(
                f"cleared: {parsed.scope} ({len(result.moved)} document(s)) → trash snapshot "
                f"{stamp}\nundo: the owner restores it with `codegen memory continuity restore "
                f"{stamp}` (nothing was deleted; tell the user)"
            )
        trash = result.snapshot.path
        return ToolResult(
            f"cleared: {parsed.scope} ({len(result.moved)} file(s)/dir(s)) → {trash}\n"
            f"undo: move the files under {trash} back into {self.store.root} (nothing was "
            "deleted; tell the user where they are)"
        )


def _descriptions(proof_mode: ProofMode, focus_max_chars: int) -> dict[str, str]:
    claimed = (
        'Proof mode is "require": steps cannot be marked claimed — complete them with '
        "PlanComplete and evidence."
        if proof_mode == "require"
        else "A step becomes proven only through PlanComplete."
    )
    complete = (
        "Mark a step done. Proof checking is off: evidence is optional and recorded unverified."
        if proof_mode == "off"
        else "Mark a step proven by citing the tool calls that show it is done; each toolUseId "
        "must be found with a successful result in the session log, or nothing changes."
    )
    return {
        "FocusRead": "Read the focus note, the active plan and the open requirements (the "
        "user's own words, kept verbatim). A focus.md a person wrote is shown read-only.",
        "FocusWrite": "Replace the focus note: what you are doing now and why "
        f"(at most {focus_max_chars} chars).",
        "PlanRead": "Read a plan (default: the active plan) with each step's status and "
        "proofs, and list the other plans.",
        "PlanUpdate": "Create a plan, add a step, set a step's status (open, in_progress, "
        f"claimed), or switch the active plan. {claimed}",
        "PlanComplete": complete,
        "GoalWrite": "Add a goal: a measurable outcome, optionally with a target, a current "
        "value and a unit.",
        "GoalUpdate": "Update a goal's title, values or status. Status proven "
        + (
            "marks it done (proof checking is off)."
            if proof_mode == "off"
            else "needs evidence: toolUseIds found with a successful result in the session log."
        ),
        "GoalList": "List the goals with their status and progress.",
        "MemoryClear": "Move the focus, the plans, the goals, or all of them (with the handoff "
        "note) to the trash. Nothing is deleted: a trash snapshot can be restored.",
    }


def continuity_tools(
    store: ContinuityStore, proof_mode: ProofMode, plan_enabled: bool
) -> list[Tool]:
    """The continuity tools in registration order (``CONTINUITY_TOOL_NAMES``)."""
    h = _Handlers(store, proof_mode)
    descriptions = _descriptions(proof_mode, store.focus_max_chars)
    complete_input = _input(
        "PlanCompleteUnverifiedInput" if proof_mode == "off" else "PlanCompleteInput"
    )
    read, write = {"read_only": True}, {"destructive": True}
    table: ToolTable = {
        "FocusRead": (_input("FocusReadInput"), h.focus_read, read),
        "FocusWrite": (_input("FocusWriteInput"), screened(h.focus_write), write),
        "PlanRead": (_input("PlanReadInput"), h.plan_read, read),
        "PlanUpdate": (_input("PlanUpdateInput"), screened(h.plan_update), write),
        "PlanComplete": (complete_input, screened(h.plan_complete), write),
        "GoalWrite": (_input("GoalWriteInput"), screened(h.goal_write), write),
        "GoalUpdate": (_input("GoalUpdateInput"), screened(h.goal_update), write),
        "GoalList": (_input("GoalListInput"), h.goal_list, read),
        "MemoryClear": (
            _input("MemoryClearInput"),
            h.memory_clear,
            {**write, "require_justification": True},
        ),
    }
    return tools_from_table(
        TOOL_NAMES if plan_enabled else FOCUS_ONLY_TOOL_NAMES, descriptions, table
    )
