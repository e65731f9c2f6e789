"""The one proof policy: what each proof mode allows a plan step or a goal.

- ``ladder``: ``claimed`` is free; ``proven`` needs every cited tool use verified in the logs.
- ``require``: as ``ladder``, and nothing may become ``claimed`` at all — complete with evidence.
- ``off``: completing needs no evidence; the step or goal becomes ``done`` (finished, never
  verified — never ``proven``; one already proven stays proven); cited evidence is recorded under
  ``citations`` as given.

Steps and goals only word their refusals differently (``Wording``). Verification reads the
session logs and never locks, so a completion is decided (``ProofPolicy.complete``) before the
store lock is taken and recorded (``Completion``) under it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Literal

from specwire.runtime.continuity.proof import (
    Citation,
    EvidenceRef,
    FrozenProof,
    ProofCheck,
    check_evidence,
    evidence_session,
    first_refusal,
    merge_citations,
    merge_proofs,
)
from specwire.runtime.core.clock import Clock
from specwire.runtime.core.errors import StoreError
from specwire.runtime.core.fragment import ProofMode
from specwire.runtime.core.lazy_dataclass import lazy_dataclass, lazy_methods_dataclass
from specwire.runtime.sessions.store import LogSource

CompletedStatus = Literal["proven", "done"]


@lazy_methods_dataclass(frozen=True)
class Wording:
    """How the refusals name what is being claimed or completed."""

    claimed_refused: str
    evidence_needed: str


STEP_WORDING = Wording(
    claimed_refused='proof mode is "require": a step cannot be marked claimed — when it is done, '
    "complete it with PlanComplete citing the toolUseId of the action that did it.",
    evidence_needed="completing a step needs evidence: cite the toolUseId of the action that "
    "shows it is done (evidence: [{toolUseId}]).",
)


def goal_wording(goal_id: str) -> Wording:
    return Wording(
        claimed_refused='proof mode is "require": a goal cannot be marked claimed — set status '
        '"proven" with evidence citing the toolUseId of the action that shows it.',
        evidence_needed=f"{goal_id} → proven needs evidence: cite the toolUseId of the action "
        "that shows it (evidence: [{toolUseId}]); nothing was changed",
    )


@lazy_dataclass(frozen=True)
class Completion:
    """A decided completion: verified proofs, or (``proof: off``) citations recorded unverified.

    ``refusal`` is set when a cited tool use did not verify: then nothing may change.
    """

    verified: bool
    checks: tuple[ProofCheck, ...] = ()
    refusal: str | None = None
    proofs: tuple[FrozenProof, ...] = ()
    cited: tuple[EvidenceRef, ...] = ()
    session_id: str | None = None

    def status(self, current: str) -> CompletedStatus:
        """The status it leaves: ``proven`` when verified; otherwise ``done``, unless the step
        or goal was proven already (an unverified completion never takes a proof away)."""
        return "proven" if self.verified or current == "proven" else "done"

    def merged_proofs(self, existing: Sequence[FrozenProof]) -> tuple[FrozenProof, ...]:
        return merge_proofs(existing, self.proofs)

    def citations(self, stamp: str) -> list[Citation]:
        """The cited evidence, as recorded unverified at ``stamp``."""
        return [
            Citation(ref.tool_use_id, evidence_session(ref, self.session_id), stamp)
            for ref in self.cited
        ]

    def merged_citations(self, existing: Sequence[Citation], stamp: str) -> tuple[Citation, ...]:
        return merge_citations(existing, self.citations(stamp))


class ProofPolicy:
    """The rules of one proof mode. Verification searches ``sessions_dir``; ``pin`` keeps the
    session logs a frozen proof cites from retention."""

    def __init__(
        self,
        mode: ProofMode,
        sessions_dir: LogSource,
        *,
        now: Clock,
        pin: Callable[[Sequence[str]], None],
    ) -> None:
        self.mode: ProofMode = mode
        self.sessions_dir = sessions_dir
        self._now = now
        self._pin = pin

    @property
    def needs_evidence(self) -> bool:
        """Whether completing needs cited, verified evidence (every mode but ``off``)."""
        return self.mode != "off"

    def check_claim(self, wording: Wording) -> None:
        """Refuse marking something ``claimed`` when the mode forbids it (``require``)."""
        if self.mode == "require":
            raise StoreError(wording.claimed_refused)

    def complete(
        self, evidence: Iterable[EvidenceRef], *, session_id: str | None, wording: Wording
    ) -> Completion:
        """Decide a completion: verify the cited tool uses (never locks, never writes)."""
        refs = tuple(evidence)
        if not self.needs_evidence:
            return Completion(verified=False, cited=refs, session_id=session_id)
        if not refs:
            raise StoreError(wording.evidence_needed)
        checks = tuple(
            check_evidence(self.sessions_dir, refs, default_session_id=session_id, now=self._now())
        )
        proofs = tuple(check.proof for check in checks if check.proof is not None)
        return Completion(True, checks, first_refusal(checks), proofs)

    def pin_proofs(self, completion: Completion) -> None:
        """Pin the sessions a verified completion's proofs cite (call under the store lock)."""
        if completion.verified:
            self._pin(sorted({proof.session_id for proof in completion.proofs}))
