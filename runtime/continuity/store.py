"""``ContinuityStore``: working memory as plain files a person can read and edit.

Files live in one scope directory (``<root>/state/<spec>/``, or
``<root>/state/<spec>/sessions/<scope>/`` with session scope)::

    focus.md                      focus note, active-plan mirror, requirements ledger
    plans/plan-NNNN-<slug>.md     one plan per file
    plans/ACTIVE                  the active plan's id (the authority)
    goals.yaml                    goals (YAML; written as JSON)
    handoff.md                    the note the last session left
    .lock                         held by mutations only

Every path is fenced with ``assert_inside(path, layout.root)`` on every I/O and then opened
component by component with ``O_NOFOLLOW`` (``runtime.continuity.atomic``): no symlink is
followed inside the state folder, and a FIFO, device or socket where a file belongs is refused
at once, naming it, instead of hanging the agent. Writes are tmp+rename with mode 0600; reads
never lock; every mutation re-reads its state under the lock (``runtime.locking``: an ``flock``
the OS releases when its holder dies, so a killed writer never blocks the next one). Opening a
store removes the temporaries a killed writer left (under the lock, only when it is free).
Nothing is created on disk until the first write. Refusals raise ``StoreError`` with a message
that is safe to show to the model.

Files a person wrote or broke are never written over: a ``focus.md`` without the specwire marker
is shown to the agent read-only (``focus_view``) and every write to it is refused; a plan file
that does not parse is an ``UnreadablePlan`` — reported with its path and the reason, its id is
never reused, and when ``plans/ACTIVE`` names it, it stays the active plan (broken) until a
person fixes it, moves it away, or another plan is made active explicitly.

Proof modes (``proof_mode``):

- ``ladder``: ``claimed`` is free; ``proven`` needs every cited tool use verified in the logs.
- ``require``: as ``ladder``, and nothing may become ``claimed`` at all — complete with evidence.
- ``off``: completing needs no evidence; the step or goal becomes ``done`` (finished, never
  verified — never ``proven``); cited evidence is recorded under ``citations`` as given.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Literal

from runtime.continuity.atomic import read_text, sweep_stale_temps, write_atomic
from runtime.continuity.focus import (
    DEFAULT_FOCUS_MAX_CHARS,
    FocusDoc,
    UserFocus,
    check_focus_body,
    is_store_owned,
    parse_focus,
    render_focus,
    user_focus,
)
from runtime.continuity.goals import (
    Goal,
    GoalStatus,
    next_goal_id,
    normalize_number,
    parse_goals,
    render_goals,
)
from runtime.continuity.handoff import HandoffView, is_handoff, render_handoff
from runtime.continuity.ledger import (
    LEDGER_MAX_BYTES,
    Requirement,
    RequirementStatus,
    append_entries,
    set_status,
)
from runtime.continuity.plans import (
    ACTIVE_FILE,
    PLAN_FILE_RE,
    PLAN_ID_RE,
    SETTABLE_STEP_STATUSES,
    Plan,
    Step,
    StepStatus,
    UnreadablePlan,
    new_plan,
    next_plan_id,
    one_line,
    parse_plan,
    plan_number,
    render_plan,
)
from runtime.continuity.proof import (
    Citation,
    EvidenceRef,
    ProofCheck,
    check_evidence,
    evidence_session,
    first_refusal,
    merge_citations,
    merge_proofs,
)
from runtime.continuity.retention import LOCK_NAME as RETENTION_LOCK_NAME
from runtime.continuity.retention import pin_sessions, retention_temp
from runtime.continuity.tail import TAIL_MAX_CHARS, render_continuity_tail, render_plan_tail
from runtime.continuity.trash import (
    Snapshot,
    list_snapshots,
    move_to_snapshot,
    new_snapshot,
    restore_snapshot,
)
from runtime.errors import MemoryServiceError, StoreError, UnsafeFileError
from runtime.events import Clock, iso, utc_now
from runtime.fragment import ProofMode
from runtime.locking import DEFAULT_WAIT_S, FileLock
from runtime.paths import StoreLayout
from runtime.seams import HandoffInput, LedgerEntry
from runtime.tenancy import assert_inside

ClearScope = Literal["focus", "plans", "goals", "all"]
NO_ACTIVE_PLAN = (
    "no active plan — pass planId, or create a plan first with PlanUpdate {action: 'create'}."
)
FOCUS_FILE = "focus.md"
PLANS_DIR = "plans"
GOALS_FILE = "goals.yaml"
HANDOFF_FILE = "handoff.md"
LOCK_FILE = ".lock"


def _drop(line: str) -> None:
    return None


def _is_state_file(name: str) -> bool:
    return name in (FOCUS_FILE, GOALS_FILE, HANDOFF_FILE)


def _is_plan_file(name: str) -> bool:
    return name == ACTIVE_FILE or PLAN_FILE_RE.match(name) is not None


@dataclass(frozen=True)
class StepCompletion:
    """The outcome of completing a step; ``refusal`` is set when the evidence did not hold."""

    plan: Plan
    step: int
    status: StepStatus | None
    checks: tuple[ProofCheck, ...] = ()
    refusal: str | None = None


@dataclass(frozen=True)
class GoalChange:
    goal: Goal
    checks: tuple[ProofCheck, ...] = ()
    refusal: str | None = None


@dataclass(frozen=True)
class ClearResult:
    scope: ClearScope
    moved: tuple[Path, ...]
    snapshot: Snapshot | None


class ContinuityStore:
    def __init__(
        self,
        layout: StoreLayout,
        *,
        scope_dir: Path | None = None,
        sessions_dir: Path | None = None,
        proof_mode: ProofMode = "ladder",
        focus_max_chars: int = DEFAULT_FOCUS_MAX_CHARS,
        now: Clock = utc_now,
        log: Callable[[str], None] = _drop,
        lock_wait_s: float = DEFAULT_WAIT_S,
        ledger_max_bytes: int = LEDGER_MAX_BYTES,
    ) -> None:
        if focus_max_chars <= 0:
            raise ValueError("focus_max_chars must be positive")
        self.layout = layout
        self.root = layout.root
        self.scope_dir = assert_inside(
            scope_dir if scope_dir is not None else layout.state_dir, layout.root
        )
        self.sessions_dir = sessions_dir if sessions_dir is not None else layout.sessions_dir
        self.proof_mode: ProofMode = proof_mode
        self.focus_max_chars = focus_max_chars
        self.ledger_max_bytes = ledger_max_bytes
        self.lock_wait_s = lock_wait_s
        self._now = now
        self._log = log
        self._held = threading.local()
        self._reported: set[tuple[str, str]] = set()
        self._sweep_stale_temps()

    # ── paths (fenced on every access) ──────────────────────────────────────────────────────

    def _path(self, *parts: str) -> Path:
        """The path as spelled (checked to resolve inside the root): the I/O below opens it
        component by component and never follows a link, so it is not resolved here."""
        path = self.scope_dir.joinpath(*parts)
        assert_inside(path, self.root)
        return path

    @property
    def focus_path(self) -> Path:
        return self._path(FOCUS_FILE)

    @property
    def plans_dir(self) -> Path:
        return self._path(PLANS_DIR)

    @property
    def goals_path(self) -> Path:
        return self._path(GOALS_FILE)

    @property
    def handoff_path(self) -> Path:
        return self._path(HANDOFF_FILE)

    @property
    def lock_path(self) -> Path:
        return self._path(LOCK_FILE)

    def _sweep_stale_temps(self) -> None:
        """Remove what writers killed mid-write left behind (see ``sweep_stale_temps``). Never
        fails the open: a folder that cannot be checked is reported by the I/O that needs it."""
        removed: list[str] = []
        try:
            removed += sweep_stale_temps(
                [(self.scope_dir, _is_state_file), (self.plans_dir, _is_plan_file)],
                root=self.root,
                lock=self._lock(wait_s=0),
            )
            removed += sweep_stale_temps(
                [(self.root, retention_temp)],
                root=self.root,
                lock=FileLock(self.root / RETENTION_LOCK_NAME, wait_s=0, now=self._now),
            )
        except (OSError, StoreError, MemoryServiceError) as exc:
            self._log(f"[memory] could not check for leftover temporary files: {exc}\n")
        if removed:
            self._log(
                f"[memory] removed {len(removed)} temporary file(s) an interrupted write left: "
                f"{', '.join(removed)}\n"
            )

    def _lock(self, *, wait_s: float) -> FileLock:
        return FileLock(self.lock_path, wait_s=wait_s, now=self._now)

    def _relative(self, path: Path) -> str:
        try:
            return str(path.relative_to(self.root.resolve()))
        except ValueError:
            return str(path)

    def _stamp(self) -> str:
        return iso(self._now())

    def _write(self, path: Path, text: str) -> None:
        write_atomic(path, text, root=self.root)

    def _read(self, path: Path) -> str | None:
        return read_text(path, root=self.root)

    @contextlib.contextmanager
    def _mutation(self) -> Iterator[None]:
        """Hold the store lock (re-entrant within one thread)."""
        depth: int = getattr(self._held, "depth", 0)
        if depth:
            self._held.depth = depth + 1
            try:
                yield
            finally:
                self._held.depth = depth
            return
        with self._lock(wait_s=self.lock_wait_s):
            self._held.depth = 1
            try:
                yield
            finally:
                self._held.depth = 0

    # ── focus and ledger ────────────────────────────────────────────────────────────────────

    def read_focus(self) -> FocusDoc | None:
        """The focus document; an empty one when there is no file; None when user-authored."""
        text = self._read(self.focus_path)
        if text is None:
            return FocusDoc()
        return parse_focus(text)

    def focus_view(self) -> FocusDoc | UserFocus:
        """What the agent sees of focus.md: the store's document (empty when there is no file),
        or the text of a file a person wrote, cut to ``focus_max_chars``."""
        text = self._read(self.focus_path)
        if text is None:
            return FocusDoc()
        doc = parse_focus(text)
        return doc if doc is not None else user_focus(text, self.focus_max_chars)

    def focus_is_user_authored(self) -> bool:
        text = self._read(self.focus_path)
        return text is not None and not is_store_owned(text)

    def _focus_for_write(self) -> FocusDoc:
        text = self._read(self.focus_path)
        if text is None:
            return FocusDoc()
        doc = parse_focus(text)
        if doc is None:
            raise StoreError(
                f"refusing to overwrite a user-authored file: {self._relative(self.focus_path)} "
                "has no <!-- specwire:focus --> marker on its first line. Edit it by hand, or "
                "move it away (MemoryClear {scope: 'focus'}) and write the focus again."
            )
        return doc

    def _save_focus(self, doc: FocusDoc) -> None:
        self._write(self.focus_path, render_focus(replace(doc, active_plan=self.active_plan_id())))

    def write_focus(self, body: str) -> FocusDoc:
        try:
            clean = check_focus_body(body, self.focus_max_chars)
        except ValueError as exc:
            raise StoreError(str(exc)) from None
        with self._mutation():
            doc = replace(self._focus_for_write(), body=clean)
            self._save_focus(doc)
        return doc

    def requirements(self) -> tuple[Requirement, ...]:
        doc = self.read_focus()
        return doc.requirements if doc is not None else ()

    def record_requirements(self, entries: Sequence[LedgerEntry]) -> list[Requirement]:
        """Append user requirements verbatim to the ledger; return the entries added."""
        if not any(e.role == "user" and e.text.strip() for e in entries):
            return []
        with self._mutation():
            doc = self._focus_for_write()
            result = append_entries(doc.requirements, entries, cap=self.ledger_max_bytes)
            if not result.added and not result.truncated:
                return []
            self._save_focus(
                replace(
                    doc,
                    requirements=tuple(result.requirements),
                    ledger_truncated=doc.ledger_truncated or result.truncated,
                )
            )
        return result.added

    def set_requirement_status(
        self, req_id: str, status: RequirementStatus, text: str
    ) -> Requirement:
        """Mark a requirement open/confirmed/dropped; ``text`` must repeat it verbatim."""
        with self._mutation():
            doc = self._focus_for_write()
            try:
                reqs = set_status(doc.requirements, req_id, status, text)
            except KeyError:
                raise StoreError(f"no requirement {req_id} in the ledger") from None
            except ValueError as exc:
                raise StoreError(str(exc)) from None
            self._save_focus(replace(doc, requirements=tuple(reqs)))
        return next(r for r in reqs if r.id == req_id)

    # ── plans ───────────────────────────────────────────────────────────────────────────────

    def _plan_files(self) -> dict[str, Path]:
        directory = self.plans_dir
        if not directory.is_dir():
            return {}
        found: dict[str, Path] = {}
        for entry in sorted(directory.iterdir(), key=lambda p: p.name):
            match = PLAN_FILE_RE.match(entry.name)
            if match is not None and match.group(1) not in found:
                assert_inside(entry, self.root)
                found[match.group(1)] = entry
        return dict(sorted(found.items(), key=lambda kv: plan_number(kv[0])))

    def _trashed_plan_ids(self) -> list[str]:
        """Ids of plans sitting in the trash: a new plan never takes one, so restoring the
        trash never collides with a plan created since."""
        relative = self.plans_dir.relative_to(self.root)
        ids: list[str] = []
        for snapshot in self.list_trash():
            directory = snapshot.path / relative
            if directory.is_dir():
                for entry in directory.iterdir():
                    match = PLAN_FILE_RE.match(entry.name)
                    if match is not None:
                        ids.append(match.group(1))
        return ids

    def _load_plan(self, plan_id: str, path: Path) -> Plan | UnreadablePlan | None:
        """The plan in ``path``; an ``UnreadablePlan`` when it does not parse; None when gone."""
        try:
            text = self._read(path)
        except UnicodeDecodeError:
            return self._unreadable(plan_id, path, "not UTF-8 text")
        except (IsADirectoryError, PermissionError) as exc:
            return self._unreadable(plan_id, path, f"cannot be read ({exc.strerror})")
        except UnsafeFileError as exc:
            return self._unreadable(plan_id, path, f"it {exc.reason}")
        if text is None:
            return None
        match = PLAN_FILE_RE.match(path.name)
        try:
            return parse_plan(text, file_id=plan_id, file_slug=match.group(2) if match else None)
        except ValueError as exc:
            return self._unreadable(plan_id, path, str(exc))

    def _unreadable(self, plan_id: str, path: Path, reason: str) -> UnreadablePlan:
        broken = UnreadablePlan(plan_id, self._relative(path), reason)
        if (broken.path, reason) not in self._reported:  # once per store, not on every turn
            self._reported.add((broken.path, reason))
            self._log(f"[memory] {broken.describe()}\n")
        return broken

    def scan_plans(self) -> tuple[list[Plan], list[UnreadablePlan]]:
        """Every plan file, by id: the plans that parse and the ones that do not."""
        plans: list[Plan] = []
        unreadable: list[UnreadablePlan] = []
        for plan_id, path in self._plan_files().items():
            loaded = self._load_plan(plan_id, path)
            if isinstance(loaded, UnreadablePlan):
                unreadable.append(loaded)
            elif loaded is not None:
                plans.append(loaded)
        return plans, unreadable

    def list_plans(self) -> list[Plan]:
        """The plans that parse (see ``unreadable_plans`` for the others)."""
        return self.scan_plans()[0]

    def unreadable_plans(self) -> list[UnreadablePlan]:
        return self.scan_plans()[1]

    def get_plan(self, plan_id: str) -> Plan:
        """The plan; a refusal naming the file and the problem when it does not parse."""
        files = self._plan_files()
        path = files.get(plan_id)
        plan = self._load_plan(plan_id, path) if path is not None else None
        if isinstance(plan, UnreadablePlan):
            raise StoreError(plan.describe())
        if plan is None:
            known = ", ".join(files) or "none yet"
            raise StoreError(f"unknown plan {plan_id} (plans: {known})")
        return plan

    def active_plan_id(self) -> str | None:
        """The id in ``plans/ACTIVE`` when a plan file with that id exists (readable or not);
        otherwise None."""
        text = self._read(self._path(PLANS_DIR, ACTIVE_FILE))
        value = (text or "").strip()
        if not PLAN_ID_RE.match(value) or value not in self._plan_files():
            return None
        return value

    def active_plan(self) -> Plan | None:
        """The active plan; raises ``StoreError`` when its file does not parse."""
        plan_id = self.active_plan_id()
        return self.get_plan(plan_id) if plan_id is not None else None

    def active_plan_state(self) -> Plan | UnreadablePlan | None:
        """The active plan, or what is wrong with its file; None when no plan is active."""
        plan_id = self.active_plan_id()
        path = self._plan_files().get(plan_id) if plan_id is not None else None
        if plan_id is None or path is None:
            return None
        return self._load_plan(plan_id, path)

    def _resolve_plan_id(self, plan_id: str | None) -> str:
        if plan_id is not None:
            return plan_id
        active = self.active_plan_id()
        if active is None:
            raise StoreError(NO_ACTIVE_PLAN)
        return active

    def _write_plan(self, plan: Plan) -> None:
        path = self._plan_files().get(plan.id) or self._path(PLANS_DIR, plan.filename)
        self._write(path, render_plan(plan))

    def _record_active(self, plan_id: str) -> None:
        self._write(self._path(PLANS_DIR, ACTIVE_FILE), plan_id + "\n")
        text = self._read(self.focus_path)
        doc = parse_focus(text) if text is not None else None
        if doc is not None:  # refresh the mirror only in a store-owned focus.md
            self._save_focus(doc)

    def create_plan(self, title: str, steps: Sequence[str] = ()) -> tuple[Plan, bool]:
        """Create a plan; it becomes active when no plan is. Returns (plan, became_active)."""
        if not one_line(title):
            raise StoreError("a plan needs a non-empty title")
        with self._mutation():
            plan_id = next_plan_id([*self._plan_files(), *self._trashed_plan_ids()])
            plan = new_plan(plan_id, title, steps, created_at=self._stamp())
            self._write_plan(plan)
            became_active = self.active_plan_id() is None
            if became_active:
                self._record_active(plan.id)
        return plan, became_active

    def add_step(self, plan_id: str | None, text: str) -> tuple[Plan, int]:
        clean = one_line(text)
        if not clean:
            raise StoreError("a step needs non-empty text")
        with self._mutation():
            plan = self.get_plan(self._resolve_plan_id(plan_id))
            plan = replace(plan, steps=(*plan.steps, Step(clean)), updated_at=self._stamp())
            self._write_plan(plan)
        return plan, len(plan.steps)

    def set_step_status(self, plan_id: str | None, step: int, status: StepStatus) -> Plan:
        if status not in SETTABLE_STEP_STATUSES:
            raise StoreError(
                f'a step cannot be set to "{status}" directly: complete it with PlanComplete'
                + (" and the toolUseId that shows it" if self.proof_mode != "off" else "")
            )
        if status == "claimed" and self.proof_mode == "require":
            raise StoreError(
                'proof mode is "require": a step cannot be marked claimed — when it is done, '
                "complete it with PlanComplete citing the toolUseId of the action that did it."
            )
        with self._mutation():
            plan = self.get_plan(self._resolve_plan_id(plan_id))
            try:
                current = plan.step(step)
            except IndexError as exc:
                raise StoreError(str(exc)) from None
            plan = plan.with_step(step, replace(current, status=status), updated_at=self._stamp())
            self._write_plan(plan)
        return plan

    def set_active(self, plan_id: str) -> Plan:
        with self._mutation():
            plan = self.get_plan(plan_id)
            self._record_active(plan.id)
        return plan

    def prove_step(
        self,
        plan_id: str | None,
        step: int,
        evidence: Sequence[EvidenceRef] = (),
        *,
        session_id: str | None = None,
    ) -> StepCompletion:
        """Complete a step: ``proven`` with verified evidence (``done`` under ``proof: off``)."""
        resolved = self._resolve_plan_id(plan_id)
        plan = self.get_plan(resolved)
        try:
            plan.step(step)
        except IndexError as exc:
            raise StoreError(str(exc)) from None
        if self.proof_mode == "off":
            return self._complete_unverified(resolved, step, evidence, session_id)
        if not evidence:
            raise StoreError(
                "completing a step needs evidence: cite the toolUseId of the action that shows "
                "it is done (evidence: [{toolUseId}])."
            )
        # Verification reads the session logs before the lock is taken.
        checks = tuple(
            check_evidence(
                self.sessions_dir, evidence, default_session_id=session_id, now=self._now()
            )
        )
        refusal = first_refusal(checks)
        if refusal is not None:
            return StepCompletion(plan, step, None, checks, refusal)
        proofs = [c.proof for c in checks if c.proof is not None]
        with self._mutation():
            plan = self.get_plan(resolved)
            current = plan.step(step)
            self._pin({p.session_id for p in proofs})
            merged = merge_proofs(plan.proofs.get(step, ()), proofs)
            plan = plan.with_step(step, replace(current, status="proven"), updated_at=self._stamp())
            plan = replace(plan, proofs={**plan.proofs, step: merged})
            self._write_plan(plan)
        return StepCompletion(plan, step, "proven", checks)

    def _complete_unverified(
        self, plan_id: str, step: int, evidence: Sequence[EvidenceRef], session_id: str | None
    ) -> StepCompletion:
        stamp = self._stamp()
        citations = [
            Citation(ref.tool_use_id, evidence_session(ref, session_id), stamp) for ref in evidence
        ]
        with self._mutation():
            plan = self.get_plan(plan_id)
            current = plan.step(step)
            status: StepStatus = "proven" if current.status == "proven" else "done"
            plan = plan.with_step(step, replace(current, status=status), updated_at=stamp)
            if citations:
                merged = merge_citations(plan.citations.get(step, ()), citations)
                plan = replace(plan, citations={**plan.citations, step: merged})
            self._write_plan(plan)
        return StepCompletion(plan, step, status)

    def _pin(self, session_ids: set[str]) -> None:
        pin_sessions(
            self.layout.retention_file,
            sorted(session_ids),
            root=self.root,
            now=self._now,
            log=self._log,
            wait_s=self.lock_wait_s,
        )

    # ── goals ───────────────────────────────────────────────────────────────────────────────

    def list_goals(self) -> list[Goal]:
        text = self._read(self.goals_path)
        if text is None:
            return []
        try:
            return parse_goals(text)
        except ValueError as exc:
            raise StoreError(
                f"{self._relative(self.goals_path)} {exc} (expected a mapping with a `goals:` "
                "list) — fix it by hand; nothing was changed"
            ) from None

    def get_goal(self, goal_id: str) -> Goal:
        goals = self.list_goals()
        for goal in goals:
            if goal.id == goal_id:
                return goal
        known = ", ".join(g.id for g in goals) or "none yet"
        raise StoreError(f"unknown goal {goal_id} (goals: {known})")

    def write_goal(
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
        with self._mutation():
            goals = self.list_goals()
            stamp = self._stamp()
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
            self._write(self.goals_path, render_goals([*goals, goal]))
        return goal

    def update_goal(
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
        goal = self.get_goal(goal_id)
        if evidence and status != "proven":
            raise StoreError('evidence is only used with status "proven"; nothing was changed')
        if status == "done":
            raise StoreError('set status "proven" to complete a goal; nothing was changed')
        if status == "claimed" and self.proof_mode == "require":
            raise StoreError(
                'proof mode is "require": a goal cannot be marked claimed — set status "proven" '
                "with evidence citing the toolUseId of the action that shows it."
            )
        checks: tuple[ProofCheck, ...] = ()
        if status == "proven" and self.proof_mode != "off":
            if not evidence:
                raise StoreError(
                    f"{goal_id} → proven needs evidence: cite the toolUseId of the action that "
                    "shows it (evidence: [{toolUseId}]); nothing was changed"
                )
            checks = tuple(
                check_evidence(
                    self.sessions_dir, evidence, default_session_id=session_id, now=self._now()
                )
            )
            refusal = first_refusal(checks)
            if refusal is not None:
                return GoalChange(goal, checks, refusal)
        with self._mutation():
            goals = self.list_goals()
            index = next((i for i, g in enumerate(goals) if g.id == goal_id), None)
            if index is None:
                raise StoreError(f"unknown goal {goal_id}")
            goal = goals[index]
            stamp = self._stamp()
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
            if status == "proven" and self.proof_mode == "off":
                cited = [
                    Citation(r.tool_use_id, evidence_session(r, session_id), stamp)
                    for r in evidence
                ]
                goal = replace(
                    goal,
                    status="proven" if goal.status == "proven" else "done",
                    citations=merge_citations(goal.citations, cited),
                )
            elif status == "proven":
                proofs = [c.proof for c in checks if c.proof is not None]
                self._pin({p.session_id for p in proofs})
                goal = replace(goal, status="proven", proofs=merge_proofs(goal.proofs, proofs))
            elif status is not None:
                goal = replace(goal, status=status)
            goals[index] = goal
            self._write(self.goals_path, render_goals(goals))
        return GoalChange(goal, checks)

    # ── tails and handoff ───────────────────────────────────────────────────────────────────

    def _safe_goals(self) -> list[Goal]:
        try:
            return self.list_goals()
        except StoreError as exc:
            self._log(f"[memory] {exc}\n")
            return []

    def render_plan_tail(self, *, include_plans: bool = True) -> str | None:
        view = self.focus_view()
        focus = view.body if isinstance(view, FocusDoc) else ""
        person = view if isinstance(view, UserFocus) else None
        plan = self.active_plan_state() if include_plans else None
        goals = self._safe_goals() if include_plans else []
        return render_plan_tail(
            focus, plan, goals, user_focus=person, focus_name=self.focus_path.name
        )

    def render_continuity_tail(
        self,
        *,
        include_plans: bool = True,
        include_ledger: bool = True,
        max_chars: int = TAIL_MAX_CHARS,
    ) -> str | None:
        doc = self.read_focus() if include_ledger else None
        return render_continuity_tail(
            self.render_plan_tail(include_plans=include_plans),
            doc.requirements if doc is not None else (),
            ledger_truncated=doc.ledger_truncated if doc is not None else False,
            max_chars=max_chars,
        )

    def handoff_view(self, handoff: HandoffInput | None = None) -> HandoffView:
        doc = self.read_focus()
        active_id = self.active_plan_id()
        plans, unreadable = self.scan_plans()
        active: Plan | UnreadablePlan | None = next((p for p in plans if p.id == active_id), None)
        if active is None:
            active = next((u for u in unreadable if u.id == active_id), None)
        return HandoffView(
            focus=doc.body if doc is not None else "",
            active_plan=active,
            other_plans=[p for p in plans if p.id != active_id],
            unreadable_plans=[u for u in unreadable if u.id != active_id],
            focus_by_person=doc is None,
            goals=self._safe_goals(),
            requirements=doc.requirements if doc is not None else (),
            session_requirements=tuple(handoff.ledger) if handoff is not None else (),
            last_session_id=handoff.session_id if handoff is not None else None,
            stop_reason=handoff.stop_reason if handoff is not None else None,
        )

    def write_handoff(self, handoff: HandoffInput) -> Path:
        with self._mutation():
            existing = self._read(self.handoff_path)
            if existing is not None and not is_handoff(existing):
                raise StoreError(
                    f"refusing to overwrite a user-authored file: "
                    f"{self._relative(self.handoff_path)} has no <!-- specwire:handoff --> marker"
                )
            self._write(self.handoff_path, render_handoff(self.handoff_view(handoff)))
        return self.handoff_path

    def read_handoff(self) -> str | None:
        """The store-written handoff note, or None (missing or user-authored)."""
        text = self._read(self.handoff_path)
        return text if text is not None and is_handoff(text) else None

    # ── trash ───────────────────────────────────────────────────────────────────────────────

    def _scope_paths(self, scope: ClearScope) -> list[Path]:
        if scope == "focus":
            return [self.focus_path]
        if scope == "plans":
            return [self.plans_dir]
        if scope == "goals":
            return [self.goals_path]
        return [self.focus_path, self.plans_dir, self.goals_path, self.handoff_path]

    def clear(self, scope: ClearScope) -> ClearResult:
        """Move the scope's files into a new trash snapshot (nothing is deleted)."""
        paths = self._scope_paths(scope)
        if not any(p.exists() for p in paths):
            return ClearResult(scope, (), None)
        with self._mutation():
            present = [p for p in self._scope_paths(scope) if p.exists()]
            if not present:
                return ClearResult(scope, (), None)
            snapshot = new_snapshot(self.layout.trash_dir, self._now(), root=self.root)
            moved = move_to_snapshot(present, snapshot, root=self.root)
        return ClearResult(scope, tuple(moved), snapshot)

    def restore(self, ts: str) -> list[Path]:
        """Move a trash snapshot back; fail closed if any destination exists."""
        with self._mutation():
            return restore_snapshot(self.layout.trash_dir, ts, root=self.root)

    def list_trash(self) -> list[Snapshot]:
        return list_snapshots(self.layout.trash_dir, root=self.root)
