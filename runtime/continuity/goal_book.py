"""``GoalBook``: the goals of one state folder in ``goals.yaml`` (format:
``runtime.continuity.goals``) and their changes. What a proof mode allows a goal is
``runtime.continuity.proof_policy``. A ``goals.yaml`` that does not parse is reported, naming the
file, and never written over.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from specwire.runtime.continuity.goals import (
    Goal,
    GoalEntryError,
    GoalStatus,
    next_goal_id,
    normalize_number,
    parse_goals,
    render_goals,
)
from specwire.runtime.continuity.plans import one_line
from specwire.runtime.continuity.proof import EvidenceRef, ProofCheck
from specwire.runtime.continuity.proof_policy import Completion, ProofPolicy, goal_wording
from specwire.runtime.continuity.state_folder import GOALS_FILE, StateFolder
from specwire.runtime.core.errors import StoreError
from specwire.runtime.core.lazy_dataclass import lazy_dataclass


@lazy_dataclass(frozen=True)
class GoalChange:
    """A goal after a change, with the proof checks made (or why it was refused)."""

    goal: Goal
    checks: tuple[ProofCheck, ...] = ()
    refusal: str | None = None


class GoalBook:
    def __init__(self, folder: StateFolder, policy: ProofPolicy) -> None:
        self._folder = folder
        self._policy = policy

    @property
    def path(self) -> Path:
        return self._folder.path(GOALS_FILE)

    def read(self) -> list[Goal]:
        text = self._folder.read(self.path)
        if text is None:
            return []
        try:
            return parse_goals(text)
        except GoalEntryError as exc:
            raise StoreError(
                f"{self._folder.relative(self.path)} {exc} — fix it by hand; nothing was changed"
            ) from None
        except ValueError as exc:
            raise StoreError(
                f"{self._folder.relative(self.path)} {exc} (expected a mapping with a `goals:` "
                "list) — fix it by hand; nothing was changed"
            ) from None

    def read_or_report(self) -> list[Goal]:
        """The goals, or none when the file does not parse (the problem is logged)."""
        try:
            return self.read()
        except StoreError as exc:
            self._folder.log(f"[memory] {exc}\n")
            return []

    def get(self, goal_id: str) -> Goal:
        goals = self.read()
        for goal in goals:
            if goal.id == goal_id:
                return goal
        known = ", ".join(g.id for g in goals) or "none yet"
        raise StoreError(f"unknown goal {goal_id} (goals: {known})")

    def write(
        self,
        title: str,
        *,
        target: float | None = None,
        current: float | None = None,
        unit: str | None = None,
    ) -> Goal:
        clean = one_line(title)
        if not clean:
            raise StoreError("a goal needs a non-empty title")
        _refuse_nul(title=title, unit=unit)
        with self._folder.mutation():
            goals = self.read()
            stamp = self._folder.stamp()
            goal = Goal(
                id=next_goal_id(goals),
                title=clean,
                status="open",
                created_at=stamp,
                updated_at=stamp,
                target=normalize_number(target),
                current=normalize_number(current),
                unit=unit,
            )
            self._folder.write(self.path, render_goals([*goals, goal]))
        return goal

    def update(
        self,
        goal_id: str,
        *,
        title: str | None = None,
        status: GoalStatus | None = None,
        target: float | None = None,
        current: float | None = None,
        unit: str | None = None,
        evidence: Sequence[EvidenceRef] = (),
        session_id: str | None = None,
    ) -> GoalChange:
        """Change a goal; status ``proven`` completes it as the proof policy allows, and nothing
        changes when a citation does not verify."""
        _refuse_nul(title=title, unit=unit)
        goal = self.get(goal_id)
        if evidence and status != "proven":
            raise StoreError('evidence is only used with status "proven"; nothing was changed')
        if status == "done":
            raise StoreError('set status "proven" to complete a goal; nothing was changed')
        if status == "claimed":
            self._policy.check_claim(goal_wording(goal_id))
        completion: Completion | None = None
        if status == "proven":
            completion = self._policy.complete(
                evidence, session_id=session_id, wording=goal_wording(goal_id)
            )
            if completion.refusal is not None:
                return GoalChange(goal, completion.checks, completion.refusal)
        with self._folder.mutation():
            goals = self.read()
            index = next((i for i, g in enumerate(goals) if g.id == goal_id), None)
            if index is None:
                raise StoreError(f"unknown goal {goal_id}")
            goal = goals[index]
            stamp = self._folder.stamp()
            if title is not None and not one_line(title):
                raise StoreError("a goal needs a non-empty title")
            goal = replace(
                goal,
                title=one_line(title) if title is not None else goal.title,
                target=normalize_number(target) if target is not None else goal.target,
                current=normalize_number(current) if current is not None else goal.current,
                unit=unit if unit is not None else goal.unit,
                updated_at=stamp,
            )
            if completion is not None:
                self._policy.pin_proofs(completion)
                goal = replace(
                    goal,
                    status=completion.status(goal.status),
                    proofs=completion.merged_proofs(goal.proofs),
                    citations=completion.merged_citations(goal.citations, stamp),
                )
            elif status is not None:
                goal = replace(goal, status=status)
            goals[index] = goal
            self._folder.write(self.path, render_goals(goals))
        return GoalChange(goal, completion.checks if completion is not None else ())


def _refuse_nul(**fields: str | None) -> None:
    """A NUL in a goal's title or unit is refused, nothing changed: goals.yaml would keep it
    escaped, but the handoff and the prompt carry it raw, and a document in PostgreSQL cannot
    hold one (every later handoff of the conversation would fail to be written)."""
    for name, value in fields.items():
        if value is not None and "\x00" in value:
            raise StoreError(
                f"a goal's {name} must not contain a NUL character; nothing was changed"
            )
