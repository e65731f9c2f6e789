"""``ContinuityStore``: working memory as plain files a person can read and edit.

A façade over one object per concern, all sharing one ``StateFolder`` (the folder's layout, its
fenced file I/O and its lock — see ``state_folder.py``) and one ``ProofPolicy`` (what each proof
mode allows — see ``proof_policy.py``):

- ``FocusNote`` (``focus_note.py``): the focus note and the active-plan mirror in ``focus.md``;
- ``RequirementsLedger`` (``requirements_ledger.py``): the verbatim requirements in ``focus.md``;
- ``PlanBook`` (``plan_book.py``): plan files, the active plan, steps and their completion;
- ``GoalBook`` (``goal_book.py``): ``goals.yaml``;
- ``HandoffNote`` (``handoff_note.py``): ``handoff.md``;
- ``TrashBin`` (``trash_bin.py``): clear and restore, never delete.

What spans concerns is composed here: the tails shown to the model, the handoff view, and the
rule that a new active plan refreshes the mirror in ``focus.md``. Refusals raise ``StoreError``
with a message that is safe to show to the model. Every text written to focus, plans and
goals — whoever writes it: a continuity tool, ``log_knowledge_gap``, the owner — is screened
and redacted here (``runtime.safety.screening``), so the handoff rendered from them is too.
Files a person wrote or broke are never written over (each concern's module says how it
reports them).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from datetime import datetime
from pathlib import Path

from specwire.runtime.continuity.focus import DEFAULT_FOCUS_MAX_CHARS, FocusDoc, UserFocus
from specwire.runtime.continuity.focus_note import FocusNote
from specwire.runtime.continuity.goal_book import GoalBook, GoalChange
from specwire.runtime.continuity.goals import Goal, GoalStatus
from specwire.runtime.continuity.handoff import HandoffView
from specwire.runtime.continuity.handoff_note import HandoffNote
from specwire.runtime.continuity.ledger import LEDGER_MAX_BYTES, Requirement, RequirementStatus
from specwire.runtime.continuity.plan_book import NO_ACTIVE_PLAN, PlanBook, StepCompletion
from specwire.runtime.continuity.plans import Plan, StepStatus, UnreadablePlan
from specwire.runtime.continuity.proof import EvidenceRef
from specwire.runtime.continuity.proof_policy import ProofPolicy
from specwire.runtime.continuity.requirements_ledger import RequirementsLedger
from specwire.runtime.continuity.retention import pin_sessions, pin_sessions_in
from specwire.runtime.continuity.state_folder import LOCK_FILE, StateFolder
from specwire.runtime.continuity.tail import (
    TAIL_MAX_CHARS,
    render_continuity_tail,
    render_plan_tail,
)
from specwire.runtime.continuity.trash import Snapshot
from specwire.runtime.continuity.trash_bin import ClearResult, ClearScope, TrashBin
from specwire.runtime.core.clock import Clock, utc_now
from specwire.runtime.core.fragment import ProofMode
from specwire.runtime.core.paths import StoreLayout
from specwire.runtime.core.seams import HandoffInput, LedgerEntry
from specwire.runtime.core.volume import DocumentVolume
from specwire.runtime.fs.locking import DEFAULT_WAIT_S
from specwire.runtime.safety.screening import screen_for_memory, storable
from specwire.runtime.sessions.store import LogSource

__all__ = [
    "NO_ACTIVE_PLAN",
    "ClearResult",
    "ClearScope",
    "ContinuityStore",
    "GoalChange",
    "StepCompletion",
]


def _drop(line: str) -> None:
    return None


class ContinuityStore:
    def __init__(
        self,
        layout: StoreLayout,
        *,
        scope_dir: Path | None = None,
        sessions_dir: LogSource | None = None,
        proof_mode: ProofMode = "ladder",
        focus_max_chars: int = DEFAULT_FOCUS_MAX_CHARS,
        now: Clock = utc_now,
        log: Callable[[str], None] = _drop,
        lock_wait_s: float = DEFAULT_WAIT_S,
        ledger_max_bytes: int = LEDGER_MAX_BYTES,
        volume: DocumentVolume | None = None,
    ) -> None:
        if focus_max_chars <= 0:
            raise ValueError("focus_max_chars must be positive")
        self.layout = layout
        self.root = layout.root
        self.sessions_dir = sessions_dir if sessions_dir is not None else layout.sessions_dir
        self.proof_mode: ProofMode = proof_mode
        self.focus_max_chars = focus_max_chars
        self.ledger_max_bytes = ledger_max_bytes
        self.lock_wait_s = lock_wait_s
        self._folder = StateFolder(
            layout.root,
            scope_dir if scope_dir is not None else layout.state_dir,
            now=now,
            log=log,
            lock_wait_s=lock_wait_s,
            volume=volume,
        )
        self.volume = self._folder.volume
        self.scope_dir = self._folder.scope_dir
        policy = ProofPolicy(proof_mode, self.sessions_dir, now=now, pin=self._pin)
        self._trash = TrashBin(self._folder, layout.trash_dir)
        self._plans = PlanBook(
            self._folder,
            policy,
            reserved_ids=self._trash.plan_ids,
            on_active_change=self._refresh_focus_mirror,
        )
        self._focus = FocusNote(
            self._folder, max_chars=focus_max_chars, active_plan_id=self._plans.active_id
        )
        self._ledger = RequirementsLedger(self._folder, self._focus, max_bytes=ledger_max_bytes)
        self._goals = GoalBook(self._folder, policy)
        self._handoff = HandoffNote(self._folder)
        self._folder.sweep_stale_temps()

    # ── paths (fenced on every access) ──────────────────────────────────────────────────────

    @property
    def focus_path(self) -> Path:
        return self._focus.path

    @property
    def plans_dir(self) -> Path:
        return self._plans.directory

    @property
    def goals_path(self) -> Path:
        return self._goals.path

    @property
    def handoff_path(self) -> Path:
        return self._handoff.path

    @property
    def lock_path(self) -> Path:
        return self._folder.path(LOCK_FILE)

    def _mutation(self) -> AbstractContextManager[None]:
        """Hold the store lock (re-entrant within one thread)."""
        return self._folder.mutation()

    def _pin(self, session_ids: Sequence[str]) -> None:
        if not self.volume.on_files:
            pin_sessions_in(
                self.volume, self.layout.retention_file, session_ids, wait_s=self.lock_wait_s
            )
            return
        pin_sessions(
            self.layout.retention_file,
            session_ids,
            root=self.root,
            now=self._folder.clock,
            log=self._folder.log,
            wait_s=self.lock_wait_s,
        )

    def _refresh_focus_mirror(self) -> None:
        self._focus.refresh_active_mirror()

    # ── focus and ledger ────────────────────────────────────────────────────────────────────

    def read_focus(self) -> FocusDoc | None:
        """The focus document; an empty one when there is no file; None when user-authored."""
        return self._focus.read()

    def focus_view(self) -> FocusDoc | UserFocus:
        """What the agent sees of focus.md (see ``FocusNote.view``)."""
        return self._focus.view()

    def focus_is_user_authored(self) -> bool:
        return self._focus.is_user_authored()

    def write_focus(self, body: str) -> FocusDoc:
        screen_for_memory(body)
        return self._focus.write(storable(body))

    def requirements(self) -> tuple[Requirement, ...]:
        return self._ledger.requirements()

    def record_requirements(self, entries: Sequence[LedgerEntry]) -> list[Requirement]:
        """Append user requirements verbatim to the ledger; return the entries added."""
        return self._ledger.record(entries)

    def set_requirement_status(
        self, req_id: str, status: RequirementStatus, text: str
    ) -> Requirement:
        """Mark a requirement open/confirmed/dropped; ``text`` must repeat it verbatim."""
        return self._ledger.set_status(req_id, status, text)

    # ── plans ───────────────────────────────────────────────────────────────────────────────

    def scan_plans(self) -> tuple[list[Plan], list[UnreadablePlan]]:
        """Every plan file, by id: the plans that parse and the ones that do not."""
        return self._plans.scan()

    def list_plans(self) -> list[Plan]:
        """The plans that parse (see ``unreadable_plans`` for the others)."""
        return self._plans.scan()[0]

    def unreadable_plans(self) -> list[UnreadablePlan]:
        return self._plans.scan()[1]

    def get_plan(self, plan_id: str) -> Plan:
        """The plan; a refusal naming the file and the problem when it does not parse."""
        return self._plans.get(plan_id)

    def active_plan_id(self) -> str | None:
        """The id in ``plans/ACTIVE`` when a plan file with that id exists; otherwise None."""
        return self._plans.active_id()

    def active_plan(self) -> Plan | None:
        """The active plan; raises ``StoreError`` when its file does not parse."""
        return self._plans.active()

    def active_plan_state(self) -> Plan | UnreadablePlan | None:
        """The active plan, or what is wrong with its file; None when no plan is active."""
        return self._plans.active_state()

    def create_plan(self, title: str, steps: Sequence[str] = ()) -> tuple[Plan, bool]:
        """Create a plan; it becomes active when no plan is. Returns (plan, became_active)."""
        screen_for_memory(title, *steps)
        return self._plans.create(storable(title), [storable(step) for step in steps])

    def add_step(self, plan_id: str | None, text: str) -> tuple[Plan, int]:
        screen_for_memory(text)
        return self._plans.add_step(plan_id, storable(text))

    def set_step_status(self, plan_id: str | None, step: int, status: StepStatus) -> Plan:
        return self._plans.set_step_status(plan_id, step, status)

    def set_active(self, plan_id: str) -> Plan:
        return self._plans.set_active(plan_id)

    def prove_step(
        self,
        plan_id: str | None,
        step: int,
        evidence: Sequence[EvidenceRef] = (),
        *,
        session_id: str | None = None,
    ) -> StepCompletion:
        """Complete a step: ``proven`` with verified evidence (``done`` under ``proof: off``)."""
        return self._plans.complete_step(plan_id, step, evidence, session_id=session_id)

    def revoke_proof(
        self, plan_id: str, step: int, tool_use_ids: Sequence[str], *, reason: str
    ) -> Plan | None:
        """Demote a proven step whose evidence no longer verifies (see ``PlanBook``)."""
        return self._plans.revoke_proof(plan_id, step, tool_use_ids, reason=reason)

    # ── goals ───────────────────────────────────────────────────────────────────────────────

    def list_goals(self) -> list[Goal]:
        return self._goals.read()

    def get_goal(self, goal_id: str) -> Goal:
        return self._goals.get(goal_id)

    def write_goal(
        self,
        title: str,
        *,
        target: float | None = None,
        current: float | None = None,
        unit: str | None = None,
    ) -> Goal:
        screen_for_memory(title, unit)
        return self._goals.write(
            storable(title),
            target=target,
            current=current,
            unit=None if unit is None else storable(unit),
        )

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
        screen_for_memory(title, unit)
        return self._goals.update(
            goal_id,
            title=None if title is None else storable(title),
            status=status,
            target=target,
            current=current,
            unit=None if unit is None else storable(unit),
            evidence=evidence,
            session_id=session_id,
        )

    # ── tails and handoff ───────────────────────────────────────────────────────────────────

    def render_plan_tail(self, *, include_plans: bool = True) -> str | None:
        view = self._focus.view()
        focus = view.body if isinstance(view, FocusDoc) else ""
        person = view if isinstance(view, UserFocus) else None
        plan = self._plans.active_state() if include_plans else None
        goals = self._goals.read_or_report() if include_plans else []
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
        doc = self._focus.read() if include_ledger else None
        return render_continuity_tail(
            self.render_plan_tail(include_plans=include_plans),
            doc.requirements if doc is not None else (),
            ledger_truncated=doc.ledger_truncated if doc is not None else False,
            max_chars=max_chars,
        )

    def handoff_view(self, handoff: HandoffInput | None = None) -> HandoffView:
        doc = self._focus.read()
        active_id = self._plans.active_id()
        plans, unreadable = self._plans.scan()
        active: Plan | UnreadablePlan | None = next((p for p in plans if p.id == active_id), None)
        if active is None:
            active = next((u for u in unreadable if u.id == active_id), None)
        return HandoffView(
            focus=doc.body if doc is not None else "",
            active_plan=active,
            other_plans=[p for p in plans if p.id != active_id],
            unreadable_plans=[u for u in unreadable if u.id != active_id],
            focus_by_person=doc is None,
            goals=self._goals.read_or_report(),
            requirements=doc.requirements if doc is not None else (),
            session_requirements=tuple(handoff.ledger) if handoff is not None else (),
            last_session_id=handoff.session_id if handoff is not None else None,
            stop_reason=handoff.stop_reason if handoff is not None else None,
        )

    def write_handoff(self, handoff: HandoffInput | None) -> Path:
        """Render the handoff note from the stores (``None``: no session just ended, as when
        the dream engine refreshes it)."""
        return self._handoff.write(lambda: self.handoff_view(handoff))

    def read_handoff(self) -> str | None:
        """The store-written handoff note, or None (missing or user-authored)."""
        return self._handoff.read()

    # ── trash ───────────────────────────────────────────────────────────────────────────────

    def clear(self, scope: ClearScope) -> ClearResult:
        """Move the scope's files into a new trash snapshot (nothing is deleted)."""
        return self._trash.clear(scope)

    def restore(self, ts: str) -> list[Path]:
        """Move a trash snapshot back; fail closed if any destination exists."""
        return self._trash.restore(ts)

    def list_trash(self) -> list[Snapshot]:
        return self._trash.snapshots()

    def purge_trash(self, before: datetime) -> list[str]:
        """Delete for good this spec's files in trash snapshots taken before ``before`` (every
        scope of the spec; other specs' files stay); the stamps of the snapshots touched."""
        return self._trash.purge(before, self.layout.state_dir)
