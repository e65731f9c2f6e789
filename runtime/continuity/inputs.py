"""Input models of the continuity tools (pydantic, ``extra="forbid"``, every field described).

``PlanUpdate`` is one object model with an ``action`` enum rather than a top-level ``oneOf``:
model APIs want a tool's input schema to be ``type: object``. A validator enforces the
per-action fields and names the offending field when one is missing or out of place.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, model_validator

from specwire.runtime.core.fragment import GOAL_ID_PATTERN, PLAN_ID_PATTERN
from specwire.runtime.core.tool_types import ToolInput

SESSION_ID_PATTERN = r"^sess_[0-9a-f]{16}$"

OptionalPlanId = Annotated[
    str | None,
    Field(
        default=None,
        pattern=PLAN_ID_PATTERN,
        description="The plan (plan-0001). Omit it to use the active plan.",
    ),
]
StepNumber = Annotated[int, Field(ge=1, description="The step number, starting at 1.")]


class _Input(ToolInput):
    pass


class EvidenceRefInput(_Input):
    toolUseId: str = Field(
        min_length=1,
        description="The id of a tool call in the session log (tu_…) whose result shows the "
        "work is done.",
    )
    sessionId: str | None = Field(
        default=None,
        pattern=SESSION_ID_PATTERN,
        description="The session the call ran in (sess_…). Omit it for the current session.",
    )


class FocusReadInput(_Input):
    pass


class FocusWriteInput(_Input):
    focus: str = Field(
        description="The new focus: what you are doing now and why, short. Replaces the old one."
    )


class PlanReadInput(_Input):
    planId: OptionalPlanId


PlanAction = Literal["create", "add_step", "set_step_status", "set_active"]
_ACTION_FIELDS: dict[str, tuple[set[str], set[str]]] = {
    # action: (required fields, allowed fields)
    "create": ({"title"}, {"title", "steps"}),
    "add_step": ({"text"}, {"planId", "text"}),
    "set_step_status": ({"step", "status"}, {"planId", "step", "status"}),
    "set_active": ({"planId"}, {"planId"}),
}


class PlanUpdateInput(_Input):
    action: PlanAction = Field(
        description="create {title, steps?} | add_step {planId?, text} | "
        "set_step_status {planId?, step, status} | set_active {planId}."
    )
    title: str | None = Field(default=None, min_length=1, description="create: the plan's title.")
    steps: list[Annotated[str, Field(min_length=1)]] | None = Field(
        default=None, description="create: the initial steps, in order."
    )
    planId: OptionalPlanId
    text: str | None = Field(default=None, min_length=1, description="add_step: the step text.")
    step: int | None = Field(
        default=None, ge=1, description="set_step_status: the step number, starting at 1."
    )
    status: Literal["open", "in_progress", "claimed"] | None = Field(
        default=None,
        description="set_step_status: open | in_progress | claimed. A step becomes proven only "
        "through PlanComplete with evidence.",
    )

    @model_validator(mode="after")
    def _fields_match_action(self) -> PlanUpdateInput:
        required, allowed = _ACTION_FIELDS[self.action]
        given = {name for name in self.model_fields_set if name != "action"}
        given = {name for name in given if getattr(self, name) is not None}
        missing = sorted(required - given)
        if missing:
            raise ValueError(f"{missing[0]}: required when action is {self.action!r}")
        extra = sorted(given - allowed)
        if extra:
            raise ValueError(f"{extra[0]}: not allowed when action is {self.action!r}")
        return self


class PlanCompleteInput(_Input):
    planId: OptionalPlanId
    step: StepNumber
    evidence: list[EvidenceRefInput] = Field(
        min_length=1,
        description="The tool calls that show the step is done: [{toolUseId, sessionId?}].",
    )


class PlanCompleteUnverifiedInput(_Input):
    """PlanComplete under ``proof: off``: evidence is optional and recorded unverified."""

    planId: OptionalPlanId
    step: StepNumber
    evidence: list[EvidenceRefInput] = Field(
        default_factory=list,
        description="Optional: tool calls that show the step is done (recorded, not verified).",
    )


class GoalWriteInput(_Input):
    title: str = Field(min_length=1, description="The goal, as a measurable outcome.")
    target: float | None = Field(default=None, description="The target value, if measurable.")
    current: float | None = Field(default=None, description="The current value (default 0).")
    unit: str | None = Field(default=None, min_length=1, description="The unit of the values.")


class GoalUpdateInput(_Input):
    goalId: str = Field(pattern=GOAL_ID_PATTERN, description="The goal id, like goal-0001.")
    title: str | None = Field(default=None, min_length=1, description="A new title.")
    status: Literal["open", "in_progress", "claimed", "proven"] | None = Field(
        default=None, description="The new status; proven needs evidence."
    )
    target: float | None = Field(default=None, description="A new target value.")
    current: float | None = Field(default=None, description="A new current value.")
    unit: str | None = Field(default=None, min_length=1, description="A new unit.")
    evidence: list[EvidenceRefInput] | None = Field(
        default=None,
        description='With status "proven": the tool calls that show it, [{toolUseId, sessionId?}].',
    )


class GoalListInput(_Input):
    pass


class MemoryClearInput(_Input):
    scope: Literal["focus", "plans", "goals", "all"] = Field(
        description="What to move to the trash: focus | plans | goals | all (all adds the "
        "handoff note). Nothing is deleted; a snapshot can be restored."
    )
    justification: str = Field(
        min_length=1, max_length=500, description="Why this should be cleared now."
    )
