"""Plan files: ``plans/plan-NNNN-<slug>.md`` with YAML front matter and step lines.

::

    ---
    {
      "createdAt": "…",
      "id": "plan-0001",
      "proofs": {"2": [{…FrozenProof…}]},
      "slug": "ship-the-release",
      "title": "Ship the release",
      "updatedAt": "…"
    }
    ---

    # Ship the release

    ## Steps

    1. [proven] Tag the commit
    2. [claimed] Publish the notes

Steps climb ``open → in_progress → claimed → proven``; ``done`` marks a step completed under
``proof: off`` (finished, never verified). Unverified citations made under ``proof: off`` go to
the ``citations`` key, never to ``proofs``. Sections a person adds after ``## Steps`` are kept.

The active plan's id is stored in ``plans/ACTIVE`` (one line). It lives with the plans so that
clearing or restoring the plans carries it along, and so that a user-authored ``focus.md`` does
not stop plans from working; ``focus.md`` shows a mirror of it.

A plan file that cannot be parsed (a person broke its front matter, say) is an
``UnreadablePlan``: it keeps its id (a new plan never takes it), it is never written over, and
when ``ACTIVE`` names it, it stays the active plan — reported as broken until a person fixes it
or moves it away.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import field, replace
from typing import Any, Literal, cast

from specwire.runtime.continuity.frontmatter import join_frontmatter, split_frontmatter
from specwire.runtime.continuity.proof import Citation, FrozenProof
from specwire.runtime.core.fragment import PLAN_FILE_PATTERN, PLAN_ID_PATTERN
from specwire.runtime.core.lazy_dataclass import lazy_dataclass
from specwire.runtime.core.patterns import LazyPattern

StepStatus = Literal["open", "in_progress", "claimed", "proven", "done"]
STEP_STATUSES: tuple[StepStatus, ...] = ("open", "in_progress", "claimed", "proven", "done")
SETTABLE_STEP_STATUSES: tuple[StepStatus, ...] = ("open", "in_progress", "claimed")
COMPLETE_STATUSES: frozenset[str] = frozenset({"proven", "done"})
PLAN_ID_RE = LazyPattern(PLAN_ID_PATTERN)
PLAN_FILE_RE = LazyPattern(PLAN_FILE_PATTERN)
ACTIVE_FILE = "ACTIVE"
SLUG_MAX = 40
NO_STEPS = "_no steps yet_"
_STEP_RE = LazyPattern(r"^\s*(\d+)\.\s+\[([a-z_]+)[^\]]*\]\s?(.*)$")
_KNOWN_META = frozenset({"id", "slug", "title", "createdAt", "updatedAt", "proofs", "citations"})


@lazy_dataclass(frozen=True)
class Step:
    """One step of a plan, and its status."""

    text: str
    status: StepStatus = "open"


@lazy_dataclass(frozen=True)
class Plan:
    """One plan file: its title, steps and timestamps."""

    id: str
    slug: str
    title: str
    created_at: str
    updated_at: str
    steps: tuple[Step, ...] = ()
    proofs: Mapping[int, tuple[FrozenProof, ...]] = field(default_factory=dict)
    citations: Mapping[int, tuple[Citation, ...]] = field(default_factory=dict)
    extra_meta: Mapping[str, Any] = field(default_factory=dict)
    trailer: str = ""

    @property
    def filename(self) -> str:
        return f"{self.id}-{self.slug}.md"

    @property
    def proven_count(self) -> int:
        return sum(1 for s in self.steps if s.status == "proven")

    @property
    def done_count(self) -> int:
        return sum(1 for s in self.steps if s.status == "done")

    @property
    def is_open(self) -> bool:
        """A plan is open until every step is complete (a plan without steps is open)."""
        return not self.steps or any(s.status not in COMPLETE_STATUSES for s in self.steps)

    def step(self, number: int) -> Step:
        if not 1 <= number <= len(self.steps):
            count = len(self.steps)
            has = f"it has {count} step(s)" if count else "it has no steps yet"
            raise IndexError(f"{self.id} has no step {number} ({has})")
        return self.steps[number - 1]

    def with_step(self, number: int, step: Step, *, updated_at: str) -> Plan:
        self.step(number)
        steps = list(self.steps)
        steps[number - 1] = step
        return replace(self, steps=tuple(steps), updated_at=updated_at)


@lazy_dataclass(frozen=True)
class UnreadablePlan:
    """A plan file that exists but does not parse; ``path`` is shown to a person as is."""

    id: str
    path: str
    reason: str

    def describe(self, *, active: bool = False) -> str:
        marker = " (active)" if active else ""
        return f"{self.id}{marker} is unreadable: {self.reason}; fix {self.path} or move it away"


def one_line(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def slugify(title: str) -> str:
    slug = re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")
    slug = slug[:SLUG_MAX].strip("-")
    return slug or "plan"


def plan_number(plan_id: str) -> int:
    match = PLAN_ID_RE.match(plan_id)
    if match is None:
        raise ValueError(f"not a plan id: {plan_id!r}")
    return int(match.group(1))


def next_plan_id(existing_ids: Iterable[str]) -> str:
    numbers = [plan_number(i) for i in existing_ids if PLAN_ID_RE.match(i)]
    return f"plan-{max(numbers, default=0) + 1:04d}"


def _proofs_data(plan: Plan) -> dict[str, list[dict[str, Any]]]:
    return {str(n): [p.to_data() for p in plan.proofs[n]] for n in sorted(plan.proofs)}


def _citations_data(plan: Plan) -> dict[str, list[dict[str, Any]]]:
    return {str(n): [c.to_data() for c in plan.citations[n]] for n in sorted(plan.citations)}


def render_plan(plan: Plan) -> str:
    meta: dict[str, Any] = dict(plan.extra_meta)
    meta.update(
        {
            "id": plan.id,
            "slug": plan.slug,
            "title": plan.title,
            "createdAt": plan.created_at,
            "updatedAt": plan.updated_at,
        }
    )
    if plan.proofs:
        meta["proofs"] = _proofs_data(plan)
    if plan.citations:
        meta["citations"] = _citations_data(plan)
    lines = [f"# {plan.title}", "", "## Steps", ""]
    if plan.steps:
        lines += [f"{n}. [{s.status}] {s.text}" for n, s in enumerate(plan.steps, start=1)]
    else:
        lines.append(NO_STEPS)
    body = "\n".join(lines) + "\n"
    if plan.trailer.strip():
        body += "\n" + plan.trailer.strip("\n") + "\n"
    return join_frontmatter(meta, body)


def _step_records(raw: Any, parse: Any) -> dict[int, tuple[Any, ...]]:
    out: dict[int, tuple[Any, ...]] = {}
    if not isinstance(raw, Mapping):
        return out
    for key, items in raw.items():
        if not (isinstance(key, str) and key.isdigit() and isinstance(items, list)):
            continue
        parsed = tuple(r for r in (parse(i) for i in items if isinstance(i, Mapping)) if r)
        if parsed:
            out[int(key)] = parsed
    return out


def parse_plan(text: str, *, file_id: str | None = None, file_slug: str | None = None) -> Plan:
    """Parse a plan file; raise ValueError when it is not one.

    The file name is the authority for id and slug (a person renaming a plan's title in the
    frontmatter does not move the file).
    """
    meta, body = split_frontmatter(text)
    plan_id = file_id or meta.get("id")
    if not isinstance(plan_id, str) or not PLAN_ID_RE.match(plan_id):
        raise ValueError("plan frontmatter has no valid id")
    slug = file_slug or meta.get("slug")
    title = meta.get("title")
    steps, trailer = _parse_steps(body)
    return Plan(
        id=plan_id,
        slug=slug if isinstance(slug, str) and slug else "plan",
        title=" ".join(title.split()) if isinstance(title, str) and title.strip() else plan_id,
        created_at=str(meta.get("createdAt", "")),
        updated_at=str(meta.get("updatedAt", "")),
        steps=tuple(steps),
        proofs=_step_records(meta.get("proofs"), FrozenProof.from_data),
        citations=_step_records(meta.get("citations"), Citation.from_data),
        extra_meta={k: v for k, v in meta.items() if k not in _KNOWN_META},
        trailer=trailer,
    )


def _parse_steps(body: str) -> tuple[list[Step], str]:
    lines = body.split("\n")
    start = next((i for i, line in enumerate(lines) if line.strip() == "## Steps"), None)
    if start is None:
        return [], ""
    steps: list[Step] = []
    end = len(lines)
    for i in range(start + 1, len(lines)):
        line = lines[i]
        if line.startswith("## ") or line.startswith("# "):
            end = i
            break
        match = _STEP_RE.match(line)
        if match is None:
            continue
        status = match.group(2)
        steps.append(
            Step(
                match.group(3).strip(),
                cast(StepStatus, status) if status in STEP_STATUSES else "open",
            )
        )
    return steps, "\n".join(lines[end:]).strip("\n")


def new_plan(plan_id: str, title: str, steps: Sequence[str], *, created_at: str) -> Plan:
    clean_title = one_line(title)
    return Plan(
        id=plan_id,
        slug=slugify(clean_title),
        title=clean_title,
        created_at=created_at,
        updated_at=created_at,
        steps=tuple(Step(one_line(s)) for s in steps if one_line(s)),
    )


def render_status(status: str) -> str:
    return "claimed — unverified" if status == "claimed" else status
