"""``goals.yaml``: ``{version: 1, goals: [...]}``, written as key-sorted, pretty-printed JSON.

JSON is valid YAML 1.2, so the file stays a YAML file for any person or tool that reads it. A goal
is ``{id: goal-NNNN, title, status, target?, current?, unit?, createdAt, updatedAt, proofs?}``;
``citations`` holds unverified evidence cited under ``proof: off``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import field
from typing import Any, Literal, cast

from specwire.runtime.continuity.frontmatter import dump_data, load_mapping
from specwire.runtime.continuity.proof import Citation, FrozenProof
from specwire.runtime.core.fragment import GOAL_ID_PATTERN
from specwire.runtime.core.lazy_dataclass import lazy_dataclass
from specwire.runtime.core.patterns import LazyPattern

GoalStatus = Literal["open", "in_progress", "claimed", "proven", "done"]
GOAL_STATUSES: tuple[GoalStatus, ...] = ("open", "in_progress", "claimed", "proven", "done")
GOAL_ID_RE = LazyPattern(GOAL_ID_PATTERN)
GOALS_VERSION = 1
Number = int | float
_KNOWN = frozenset(
    {
        "id",
        "title",
        "status",
        "target",
        "current",
        "unit",
        "createdAt",
        "updatedAt",
        "proofs",
        "citations",
    }
)


@lazy_dataclass(frozen=True)
class Goal:
    """One goal of ``goals.yaml``."""

    id: str
    title: str
    status: GoalStatus
    created_at: str
    updated_at: str
    target: Number | None = None
    current: Number | None = None
    unit: str | None = None
    proofs: tuple[FrozenProof, ...] = ()
    citations: tuple[Citation, ...] = ()
    extra: Mapping[str, Any] = field(default_factory=dict)

    @property
    def is_open(self) -> bool:
        return self.status not in ("proven", "done")


def next_goal_id(goals: Sequence[Goal]) -> str:
    numbers = [int(m.group(1)) for g in goals if (m := GOAL_ID_RE.match(g.id))]
    return f"goal-{max(numbers, default=0) + 1:04d}"


def normalize_number(value: Number | None) -> Number | None:
    """Integral floats become ints, so ``10.0`` from a tool call is stored as ``10``."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def _number(value: Any) -> Number | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return value


def goal_to_data(goal: Goal) -> dict[str, Any]:
    data: dict[str, Any] = dict(goal.extra)
    data.update(
        {
            "id": goal.id,
            "title": goal.title,
            "status": goal.status,
            "createdAt": goal.created_at,
            "updatedAt": goal.updated_at,
        }
    )
    for key, value in (("target", goal.target), ("current", goal.current), ("unit", goal.unit)):
        if value is not None:
            data[key] = value
    if goal.proofs:
        data["proofs"] = [p.to_data() for p in goal.proofs]
    if goal.citations:
        data["citations"] = [c.to_data() for c in goal.citations]
    return data


def goal_from_data(raw: Mapping[str, Any]) -> Goal | None:
    goal_id, title, status = raw.get("id"), raw.get("title"), raw.get("status")
    if not (isinstance(goal_id, str) and GOAL_ID_RE.match(goal_id) and isinstance(title, str)):
        return None
    if status is not None and status not in GOAL_STATUSES:
        return None  # a person's typo ("finished") must not be rewritten as "open"
    proofs = raw.get("proofs")
    citations = raw.get("citations")
    unit = raw.get("unit")
    return Goal(
        id=goal_id,
        title=" ".join(title.split()),  # a folded YAML title ends with a newline
        status=cast(GoalStatus, status) if status in GOAL_STATUSES else "open",
        created_at=str(raw.get("createdAt", "")),
        updated_at=str(raw.get("updatedAt", "")),
        target=_number(raw.get("target")),
        current=_number(raw.get("current")),
        unit=unit if isinstance(unit, str) else None,
        proofs=tuple(
            p
            for p in (FrozenProof.from_data(i) for i in (proofs or []) if isinstance(i, Mapping))
            if p
        )
        if isinstance(proofs, list)
        else (),
        citations=tuple(
            c
            for c in (Citation.from_data(i) for i in (citations or []) if isinstance(i, Mapping))
            if c
        )
        if isinstance(citations, list)
        else (),
        extra={k: v for k, v in raw.items() if k not in _KNOWN},
    )


def render_goals(goals: Sequence[Goal]) -> str:
    return dump_data({"version": GOALS_VERSION, "goals": [goal_to_data(g) for g in goals]}) + "\n"


class GoalEntryError(ValueError):
    """One entry of ``goals:`` is not a goal; the message names its line and why."""


def parse_goals(text: str) -> list[Goal]:
    """Parse goals.yaml (any YAML); raise ValueError when it is not a mapping with goals, and
    ``GoalEntryError`` naming the line of an entry that is not a goal (a person's typo must not
    make the whole file read as "no goals yet")."""
    if not text.strip():
        return []
    raw = load_mapping(text)
    items = raw.get("goals", [])
    if not isinstance(items, list):
        raise ValueError("has a `goals` entry that is not a list")
    goals: list[Goal] = []
    for index, item in enumerate(items):
        goal = goal_from_data(item) if isinstance(item, Mapping) else None
        if goal is None:
            raise GoalEntryError(_entry_problem(text, index, item))
        goals.append(goal)
    return goals


def _entry_problem(text: str, index: int, item: Any) -> str:
    from specwire.runtime.core.yaml_text import LocatedYamlError, load_located_yaml

    line = 0
    try:
        located = load_located_yaml(text).value["goals"].value[index]
        line = located.line
    except (LocatedYamlError, KeyError, IndexError, TypeError, AttributeError):
        pass
    where = f"line {line}: " if line else ""
    if not isinstance(item, Mapping):
        return f"{where}goal entry {index + 1} is not a mapping of goal fields"
    goal_id = item.get("id")
    status = item.get("status")
    if not isinstance(goal_id, str) or not GOAL_ID_RE.match(goal_id):
        reason = f"its `id` is not a goal id like goal-0001 (got {goal_id!r})"
    elif not isinstance(item.get("title"), str):
        reason = f"{goal_id} has no `title` text"
    else:
        reason = f"{goal_id}'s `status` is not one of {', '.join(GOAL_STATUSES)} (got {status!r})"
    unknown = sorted(str(key) for key in item if key not in _KNOWN)
    if unknown:
        reason += f"; unknown key(s): {', '.join(unknown)}"
    return f"{where}goal entry {index + 1}: {reason}"


def format_number(value: Number) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def progress(goal: Goal) -> str:
    """``(<current ?? 0>/<target> <unit>)``, or "" when the goal has no target."""
    if goal.target is None:
        return ""
    current = format_number(goal.current if goal.current is not None else 0)
    unit = f" {goal.unit}" if goal.unit else ""
    return f" ({current}/{format_number(goal.target)}{unit})"
