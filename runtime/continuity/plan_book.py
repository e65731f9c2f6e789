"""``PlanBook``: the plan files of one state folder, the active plan, and step changes.

The file format is ``runtime.continuity.plans``. A plan file that does not parse is an
``UnreadablePlan`` — reported once per store with its path and the reason, its id is never reused,
and when ``plans/ACTIVE`` names it, it stays the active plan (broken) until a person fixes it,
moves it away, or another plan is made active explicitly. What a proof mode allows a step is
``runtime.continuity.proof_policy``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from pathlib import Path

from specwire.runtime.continuity.plans import (
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
from specwire.runtime.continuity.proof import EvidenceRef, ProofCheck
from specwire.runtime.continuity.proof_policy import STEP_WORDING, ProofPolicy
from specwire.runtime.continuity.state_folder import PLANS_DIR, StateFolder
from specwire.runtime.core.errors import StoreError, UnsafeFileError
from specwire.runtime.core.lazy_dataclass import lazy_dataclass
from specwire.runtime.core.tenancy import assert_inside

# Front-matter key keeping the proofs taken back from steps (``revoke_proof``).
REVOKED_KEY = "revokedProofs"
NO_ACTIVE_PLAN = (
    "no active plan — pass planId, or create a plan first with PlanUpdate {action: 'create'}."
)


@lazy_dataclass(frozen=True)
class StepCompletion:
    """The outcome of completing a step; ``refusal`` is set when the evidence did not hold."""

    plan: Plan
    step: int
    status: StepStatus | None
    checks: tuple[ProofCheck, ...] = ()
    refusal: str | None = None


class PlanBook:
    """Plans in ``<folder>/plans``. ``reserved_ids`` are ids a new plan must not take (the plans
    in the trash); ``on_active_change`` runs, under the lock, after ``plans/ACTIVE`` changed."""

    def __init__(
        self,
        folder: StateFolder,
        policy: ProofPolicy,
        *,
        reserved_ids: Callable[[], Iterable[str]],
        on_active_change: Callable[[], None],
    ) -> None:
        self._folder = folder
        self._policy = policy
        self._reserved_ids = reserved_ids
        self._on_active_change = on_active_change
        self._reported: set[tuple[str, str]] = set()

    @property
    def directory(self) -> Path:
        return self._folder.path(PLANS_DIR)

    # ── reading ─────────────────────────────────────────────────────────────────────────────

    def files(self) -> dict[str, Path]:
        """Every plan file by id, in plan-number order (the first file wins for an id)."""
        directory = self.directory
        found: dict[str, Path] = {}
        for entry in (directory / name for name in self._folder.names(directory)):
            match = PLAN_FILE_RE.match(entry.name)
            if match is not None and match.group(1) not in found:
                assert_inside(entry, self._folder.root)
                found[match.group(1)] = entry
        return dict(sorted(found.items(), key=lambda kv: plan_number(kv[0])))

    def _load(self, plan_id: str, path: Path) -> Plan | UnreadablePlan | None:
        """The plan in ``path``; an ``UnreadablePlan`` when it does not parse; None when gone."""
        try:
            text = self._folder.read(path)
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
        broken = UnreadablePlan(plan_id, self._folder.relative(path), reason)
        if (broken.path, reason) not in self._reported:  # once per store, not on every turn
            self._reported.add((broken.path, reason))
            self._folder.log(f"[memory] {broken.describe()}\n")
        return broken

    def scan(self) -> tuple[list[Plan], list[UnreadablePlan]]:
        """Every plan file, by id: the plans that parse and the ones that do not."""
        plans: list[Plan] = []
        unreadable: list[UnreadablePlan] = []
        for plan_id, path in self.files().items():
            loaded = self._load(plan_id, path)
            if isinstance(loaded, UnreadablePlan):
                unreadable.append(loaded)
            elif loaded is not None:
                plans.append(loaded)
        return plans, unreadable

    def get(self, plan_id: str) -> Plan:
        """The plan; a refusal naming the file and the problem when it does not parse."""
        files = self.files()
        path = files.get(plan_id)
        plan = self._load(plan_id, path) if path is not None else None
        if isinstance(plan, UnreadablePlan):
            raise StoreError(plan.describe())
        if plan is None:
            known = ", ".join(files) or "none yet"
            raise StoreError(f"unknown plan {plan_id} (plans: {known})")
        return plan

    def active_id(self) -> str | None:
        """The id in ``plans/ACTIVE`` when a plan file with that id exists (readable or not);
        otherwise None."""
        text = self._folder.read(self._folder.path(PLANS_DIR, ACTIVE_FILE))
        value = (text or "").strip()
        if not PLAN_ID_RE.match(value) or value not in self.files():
            return None
        return value

    def active(self) -> Plan | None:
        """The active plan; raises ``StoreError`` when its file does not parse."""
        plan_id = self.active_id()
        return self.get(plan_id) if plan_id is not None else None

    def active_state(self) -> Plan | UnreadablePlan | None:
        """The active plan, or what is wrong with its file; None when no plan is active."""
        plan_id = self.active_id()
        path = self.files().get(plan_id) if plan_id is not None else None
        if plan_id is None or path is None:
            return None
        return self._load(plan_id, path)

    def _resolve_id(self, plan_id: str | None) -> str:
        if plan_id is not None:
            return plan_id
        active = self.active_id()
        if active is None:
            raise StoreError(NO_ACTIVE_PLAN)
        return active

    # ── writing (every change re-reads the plan under the lock) ─────────────────────────────

    def _write(self, plan: Plan) -> None:
        path = self.files().get(plan.id) or self._folder.path(PLANS_DIR, plan.filename)
        self._folder.write(path, render_plan(plan))

    def _record_active(self, plan_id: str) -> None:
        self._folder.write(self._folder.path(PLANS_DIR, ACTIVE_FILE), plan_id + "\n")
        self._on_active_change()

    def create(self, title: str, steps: Sequence[str] = ()) -> tuple[Plan, bool]:
        """Create a plan; it becomes active when no plan is. Returns (plan, became_active)."""
        if not one_line(title):
            raise StoreError("a plan needs a non-empty title")
        with self._folder.mutation():
            plan_id = next_plan_id([*self.files(), *self._reserved_ids()])
            plan = new_plan(plan_id, title, steps, created_at=self._folder.stamp())
            self._write(plan)
            became_active = self.active_id() is None
            if became_active:
                self._record_active(plan.id)
        return plan, became_active

    def add_step(self, plan_id: str | None, text: str) -> tuple[Plan, int]:
        clean = one_line(text)
        if not clean:
            raise StoreError("a step needs non-empty text")
        with self._folder.mutation():
            plan = self.get(self._resolve_id(plan_id))
            plan = replace(plan, steps=(*plan.steps, Step(clean)), updated_at=self._folder.stamp())
            self._write(plan)
        return plan, len(plan.steps)

    def set_step_status(self, plan_id: str | None, step: int, status: StepStatus) -> Plan:
        if status not in SETTABLE_STEP_STATUSES:
            raise StoreError(
                f'a step cannot be set to "{status}" directly: complete it with PlanComplete'
                + (" and the toolUseId that shows it" if self._policy.needs_evidence else "")
            )
        if status == "claimed":
            self._policy.check_claim(STEP_WORDING)
        with self._folder.mutation():
            plan = self.get(self._resolve_id(plan_id))
            try:
                current = plan.step(step)
            except IndexError as exc:
                raise StoreError(str(exc)) from None
            plan = plan.with_step(
                step, replace(current, status=status), updated_at=self._folder.stamp()
            )
            self._write(plan)
        return plan

    def set_active(self, plan_id: str) -> Plan:
        with self._folder.mutation():
            plan = self.get(plan_id)
            self._record_active(plan.id)
        return plan

    def complete_step(
        self,
        plan_id: str | None,
        step: int,
        evidence: Sequence[EvidenceRef] = (),
        *,
        session_id: str | None = None,
    ) -> StepCompletion:
        """Complete a step as the proof policy allows: ``proven`` with verified evidence
        (``done`` under ``proof: off``); nothing changes when a citation does not verify."""
        resolved = self._resolve_id(plan_id)
        plan = self.get(resolved)
        try:
            plan.step(step)
        except IndexError as exc:
            raise StoreError(str(exc)) from None
        completion = self._policy.complete(evidence, session_id=session_id, wording=STEP_WORDING)
        if completion.refusal is not None:
            return StepCompletion(plan, step, None, completion.checks, completion.refusal)
        with self._folder.mutation():
            plan = self.get(resolved)
            current = plan.step(step)
            self._policy.pin_proofs(completion)
            status = completion.status(current.status)
            stamp = self._folder.stamp()
            plan = plan.with_step(step, replace(current, status=status), updated_at=stamp)
            if completion.verified:
                merged = completion.merged_proofs(plan.proofs.get(step, ()))
                plan = replace(plan, proofs={**plan.proofs, step: merged})
            if completion.cited:
                cited = completion.merged_citations(plan.citations.get(step, ()), stamp)
                plan = replace(plan, citations={**plan.citations, step: cited})
            self._write(plan)
        return StepCompletion(plan, step, status, completion.checks)

    def revoke_proof(
        self, plan_id: str, step: int, tool_use_ids: Sequence[str], *, reason: str
    ) -> Plan | None:
        """Take back a ``proven`` step whose cited evidence no longer verifies.

        The step goes back to ``claimed`` (``in_progress`` under ``proof: require``, which
        forbids ``claimed``); the revoked proofs leave ``proofs`` and are kept, with the reason
        and when, under ``revokedProofs`` in the front matter (nothing is lost). None when the
        step is no longer proven (changed meanwhile): nothing is written.
        """
        revoked = set(tool_use_ids)
        with self._folder.mutation():
            plan = self.get(plan_id)
            try:
                current = plan.step(step)
            except IndexError as exc:
                raise StoreError(str(exc)) from None
            if current.status != "proven":
                return None
            stamp = self._folder.stamp()
            kept = tuple(p for p in plan.proofs.get(step, ()) if p.tool_use_id not in revoked)
            gone = [p for p in plan.proofs.get(step, ()) if p.tool_use_id in revoked]
            status: StepStatus = "in_progress" if self._policy.mode == "require" else "claimed"
            proofs = {n: ps for n, ps in plan.proofs.items() if n != step}
            if kept:
                proofs[step] = kept
            meta = dict(plan.extra_meta)
            history = meta.get(REVOKED_KEY)
            records = dict(history) if isinstance(history, dict) else {}
            previous = records.get(str(step))
            entries = list(previous) if isinstance(previous, list) else []
            entries += [{**p.to_data(), "revokedAt": stamp, "reason": reason} for p in gone]
            records[str(step)] = entries
            meta[REVOKED_KEY] = records
            plan = plan.with_step(step, replace(current, status=status), updated_at=stamp)
            plan = replace(plan, proofs=proofs, extra_meta=meta)
            self._write(plan)
        return plan
