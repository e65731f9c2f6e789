"""The one proof policy, on its own: what each mode allows a step or a goal."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from continuity_support import SESSION, record_tool_call

from specwire.runtime.continuity.proof import EvidenceRef
from specwire.runtime.continuity.proof_policy import STEP_WORDING, ProofPolicy, goal_wording
from specwire.runtime.core.errors import StoreError
from specwire.runtime.core.fragment import ProofMode


def policy(tmp_path: Path, mode: ProofMode, pinned: list[list[str]] | None = None) -> ProofPolicy:
    sink = pinned if pinned is not None else []
    return ProofPolicy(
        mode,
        tmp_path,
        now=lambda: datetime(2026, 3, 1, tzinfo=UTC),
        pin=lambda sessions: sink.append(list(sessions)),
    )


def test_require_refuses_claimed_and_ladder_allows_it(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match='proof mode is "require"'):
        policy(tmp_path, "require").check_claim(STEP_WORDING)
    with pytest.raises(StoreError, match="a goal cannot be marked claimed"):
        policy(tmp_path, "require").check_claim(goal_wording("goal-0001"))
    policy(tmp_path, "ladder").check_claim(STEP_WORDING)
    policy(tmp_path, "off").check_claim(STEP_WORDING)


@pytest.mark.parametrize("mode", ["ladder", "require"])
def test_completing_needs_verified_evidence(tmp_path: Path, mode: ProofMode) -> None:
    with pytest.raises(StoreError, match="needs evidence"):
        policy(tmp_path, mode).complete([], session_id=SESSION, wording=STEP_WORDING)
    missing = policy(tmp_path, mode).complete(
        [EvidenceRef("tu_0000000000000001")], session_id=SESSION, wording=STEP_WORDING
    )
    assert missing.refusal is not None  # nothing may change
    record_tool_call(tmp_path, SESSION, "tu_0000000000000002")
    pinned: list[list[str]] = []
    done = policy(tmp_path, mode, pinned).complete(
        [EvidenceRef("tu_0000000000000002")], session_id=SESSION, wording=STEP_WORDING
    )
    assert done.refusal is None and done.verified and len(done.proofs) == 1
    policy(tmp_path, mode, pinned).pin_proofs(done)
    assert pinned == [[SESSION]]


def test_off_records_citations_unverified_and_never_takes_a_proof_away(tmp_path: Path) -> None:
    completion = policy(tmp_path, "off").complete(
        [EvidenceRef("tu_0000000000000009")], session_id=SESSION, wording=STEP_WORDING
    )
    assert not completion.verified and completion.refusal is None
    assert completion.status("open") == "done"
    assert completion.status("proven") == "proven"
    [citation] = completion.citations("2026-03-01T00:00:00.000Z")
    assert (citation.tool_use_id, citation.session_id) == ("tu_0000000000000009", SESSION)
    assert policy(tmp_path, "off").complete([], session_id=None, wording=STEP_WORDING).cited == ()
