"""Proof re-validation: every ``proven`` step's frozen proofs are checked again in the logs.

Each frozen proof is resolved with the proof ladder's own checker
(``runtime.continuity.proof.check_evidence``) in the session it was frozen from:

- verified: it still holds; its session is (re-)pinned in ``retention.json``, so the log it
  rests on is kept (the retention-pin refresh);
- the session log is gone (purged or erased): unverifiable, counted and kept — the frozen
  record is what a proof keeps for exactly that case;
- the log is there but the call is not (a line whose seal fails is not read), its result is an
  error, or it is one of the agent's own memory tools: the proof failed.

A step all of whose proofs failed is demoted with ``ContinuityStore.revoke_proof`` (back to
``claimed``, or ``in_progress`` under ``proof: require``; the revoked proofs are kept in the
plan's front matter). A step with one proof still standing stays proven. A step marked proven
without any frozen proof (a person's edit) is left as the person wrote it. Goals are not
re-checked (their proofs only close a goal; nothing downstream reads them as evidence).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from specwire.runtime.continuity.plans import Plan
from specwire.runtime.continuity.proof import EvidenceRef, FrozenProof, check_evidence
from specwire.runtime.continuity.retention import pin_sessions, pin_sessions_in
from specwire.runtime.continuity.store import ContinuityStore
from specwire.runtime.sessions.store import LogSource, log_exists

REVOKE_REASON = "dream: the cited tool use no longer verifies in the session log ({verdict})"


@dataclass(frozen=True)
class ProofTally:
    checked: int = 0
    demoted: int = 0
    unverifiable: int = 0
    standing_sessions: tuple[str, ...] = ()


def _verdict(sessions_dir: LogSource, proof: FrozenProof, now: datetime) -> str:
    if not log_exists(sessions_dir, proof.session_id):
        return "unverifiable"
    ref = EvidenceRef(proof.tool_use_id, proof.session_id)
    [check] = check_evidence(sessions_dir, [ref], default_session_id=proof.session_id, now=now)
    return check.verdict


def _check_plan(
    store: ContinuityStore, plan: Plan, now: datetime
) -> tuple[int, int, int, list[str]]:
    checked = demoted = unverifiable = 0
    standing: list[str] = []
    for number, step in enumerate(plan.steps, start=1):
        proofs = plan.proofs.get(number, ())
        if step.status != "proven" or not proofs:
            continue
        failed: dict[str, str] = {}
        for proof in proofs:
            checked += 1
            verdict = _verdict(store.sessions_dir, proof, now)
            if verdict == "verified":
                standing.append(proof.session_id)
            elif verdict == "unverifiable":
                unverifiable += 1
            else:
                failed[proof.tool_use_id] = verdict
        if failed and len(failed) == len(proofs):
            verdicts = ", ".join(sorted(set(failed.values())))
            reason = REVOKE_REASON.format(verdict=verdicts)
            if store.revoke_proof(plan.id, number, list(failed), reason=reason) is not None:
                demoted += 1
    return checked, demoted, unverifiable, standing


def revalidate_proofs(store: ContinuityStore, now: datetime) -> ProofTally:
    checked = demoted = unverifiable = 0
    standing: list[str] = []
    for plan in store.list_plans():
        c, d, u, s = _check_plan(store, plan, now)
        checked, demoted, unverifiable = checked + c, demoted + d, unverifiable + u
        standing += s
    return ProofTally(checked, demoted, unverifiable, tuple(dict.fromkeys(standing)))


def refresh_pins(
    store: ContinuityStore,
    sessions: tuple[str, ...],
    now: Callable[[], datetime],
    log: Callable[[str], None],
) -> int:
    """Pin the sessions standing proofs rest on; how many were not pinned yet."""
    layout = store.layout
    if not store.volume.on_files:
        return len(
            pin_sessions_in(store.volume, layout.retention_file, sessions, wait_s=store.lock_wait_s)
        )
    added = pin_sessions(layout.retention_file, sessions, root=layout.root, now=now, log=log)
    return len(added)
