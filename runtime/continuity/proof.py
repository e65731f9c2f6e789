"""The proof ladder's evidence check: cited tool uses must be found in the session logs.

A citation is verified with ``runtime.sessions.log.resolve_tool_use``: ``verified`` needs the
``tool_use`` and a non-error ``tool_result``. A verified citation is frozen into a
``FrozenProof`` (what ran, a hash of its input, a digest of its result) so the record stays
meaningful even if the session log is later purged.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any, Literal

from specwire.runtime.core.clock import iso
from specwire.runtime.core.ids import SESSION_ID_RE
from specwire.runtime.core.lazy_dataclass import lazy_dataclass
from specwire.runtime.core.tool_types import DELEGATE_TOOL_NAME, is_evidence_tool
from specwire.runtime.sessions.log import resolve_tool_use, run_of
from specwire.runtime.sessions.store import LogSource

# not_evidence: the cited call exists but is one of the agent's own memory tools.
# unrelated: the cited session is not part of the citing session's research or crew run.
ProofVerdict = Literal["verified", "missing", "error_result", "not_evidence", "unrelated"]
RESULT_DIGEST_MAX = 240


@lazy_dataclass(frozen=True)
class EvidenceRef:
    """A tool call cited as evidence: its id, and the session it ran in."""

    tool_use_id: str
    session_id: str | None = None


@lazy_dataclass(frozen=True)
class FrozenProof:
    """Evidence checked and frozen: the call's tool, input hash and result digest."""

    tool_use_id: str
    session_id: str
    tool_name: str | None
    input_hash: str
    result_digest: str
    verified_at: str

    def to_data(self) -> dict[str, Any]:
        return {
            "toolUseId": self.tool_use_id,
            "sessionId": self.session_id,
            "toolName": self.tool_name,
            "inputHash": self.input_hash,
            "resultDigest": self.result_digest,
            "verifiedAt": self.verified_at,
        }

    @classmethod
    def from_data(cls, raw: Mapping[str, Any]) -> FrozenProof | None:
        def text(key: str) -> str | None:
            value = raw.get(key)
            return value if isinstance(value, str) else None

        tool_use_id, session_id = text("toolUseId"), text("sessionId")
        if tool_use_id is None or session_id is None:
            return None
        return cls(
            tool_use_id,
            session_id,
            text("toolName"),
            text("inputHash") or "",
            text("resultDigest") or "",
            text("verifiedAt") or "",
        )


@lazy_dataclass(frozen=True)
class Citation:
    """Evidence cited under ``proof: off``: recorded as given, never verified."""

    tool_use_id: str
    session_id: str | None
    recorded_at: str

    def to_data(self) -> dict[str, Any]:
        return {
            "toolUseId": self.tool_use_id,
            "sessionId": self.session_id,
            "recordedAt": self.recorded_at,
            "verified": False,
        }

    @classmethod
    def from_data(cls, raw: Mapping[str, Any]) -> Citation | None:
        tool_use_id = raw.get("toolUseId")
        session_id = raw.get("sessionId")
        recorded_at = raw.get("recordedAt")
        if not isinstance(tool_use_id, str):
            return None
        return cls(
            tool_use_id,
            session_id if isinstance(session_id, str) else None,
            recorded_at if isinstance(recorded_at, str) else "",
        )


@lazy_dataclass(frozen=True)
class ProofCheck:
    """The verdict on one cited tool call."""

    ref: EvidenceRef
    session_id: str | None  # the session searched (None when none could be determined)
    verdict: ProofVerdict
    proof: FrozenProof | None = None
    tool_name: str | None = None

    def refusal(self) -> str | None:
        """Why this citation does not prove anything (None when it is verified)."""
        tu = self.ref.tool_use_id
        if self.verdict == "verified":
            return None
        if self.verdict == "unrelated":
            return (
                f"{tu} was cited in session {self.session_id}, which is not part of this run: "
                "only a tool call made in this run (this session or one of its branches or "
                "sub-sessions) can prove its steps."
            )
        if self.verdict == "not_evidence" and self.tool_name == DELEGATE_TOOL_NAME:
            return (
                f"{tu} is a delegation: its answer is not evidence by itself. Cite the tool call "
                "the delegated role made (pass its toolUseId; it is found in the sub-session)."
            )
        if self.verdict == "not_evidence":
            return (
                f"{tu} is a call to {self.tool_name}, one of the agent's own memory tools — that "
                "is not evidence the work was done: cite the tool call that did the work."
            )
        if self.verdict == "error_result":
            return (
                f"the cited call {tu} failed (its tool_result is an error) — a failed action is "
                "not evidence: fix the problem, run it again, then complete the step with the "
                "new toolUseId."
            )
        if self.session_id is None:
            return (
                f"no verified evidence for {tu}: no session to search — cite "
                "{toolUseId, sessionId} explicitly."
            )
        return (
            f"no verified evidence for {tu}: run the action first, then complete the step "
            "with its toolUseId."
        )


def canonical_json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def input_hash(value: Any) -> str:
    return "sha256:" + hashlib.sha256(canonical_json(value).encode("utf-8")).hexdigest()


def result_digest(text: str | None) -> str:
    collapsed = re.sub(r"\s+", " ", text or "").strip()
    if len(collapsed) <= RESULT_DIGEST_MAX:
        return collapsed
    return collapsed[: RESULT_DIGEST_MAX - 1] + "…"


def evidence_session(ref: EvidenceRef, default_session_id: str | None) -> str | None:
    """Resolution order: the citation's own sessionId, then the calling session."""
    for candidate in (ref.session_id, default_session_id):
        if candidate:
            return candidate
    return None


def check_evidence(
    sessions_dir: LogSource,
    refs: Sequence[EvidenceRef],
    *,
    default_session_id: str | None,
    now: datetime,
) -> list[ProofCheck]:
    """Resolve each citation in the session logs. Never locks, never writes."""
    checks: list[ProofCheck] = []
    caller_run = None
    if default_session_id and SESSION_ID_RE.match(default_session_id):
        caller_run = run_of(sessions_dir, default_session_id)
    for ref in refs:
        session_id = evidence_session(ref, default_session_id)
        if session_id is None or not SESSION_ID_RE.match(session_id):
            checks.append(ProofCheck(ref, None, "missing"))
            continue
        if (
            caller_run is not None
            and session_id != default_session_id
            and run_of(sessions_dir, session_id) != caller_run
        ):
            checks.append(ProofCheck(ref, session_id, "unrelated"))
            continue
        found = resolve_tool_use(sessions_dir, session_id, ref.tool_use_id)
        session_id = found.session_id or session_id
        if found.verdict == "verified" and not is_evidence_tool(found.tool_name or ""):
            checks.append(ProofCheck(ref, session_id, "not_evidence", None, found.tool_name))
            continue
        proof = None
        if found.verdict == "verified":
            proof = FrozenProof(
                tool_use_id=ref.tool_use_id,
                session_id=session_id,
                tool_name=found.tool_name,
                input_hash=input_hash(found.input),
                result_digest=result_digest(found.result_text),
                verified_at=iso(now),
            )
        checks.append(ProofCheck(ref, session_id, found.verdict, proof, found.tool_name))
    return checks


def first_refusal(checks: Iterable[ProofCheck]) -> str | None:
    for check in checks:
        reason = check.refusal()
        if reason is not None:
            return reason
    return None


def merge_proofs(
    existing: Sequence[FrozenProof], new: Iterable[FrozenProof]
) -> tuple[FrozenProof, ...]:
    """Existing proofs first; a toolUseId already frozen is not frozen twice."""
    merged = list(existing)
    seen = {p.tool_use_id for p in merged}
    for proof in new:
        if proof.tool_use_id not in seen:
            seen.add(proof.tool_use_id)
            merged.append(proof)
    return tuple(merged)


def merge_citations(existing: Sequence[Citation], new: Iterable[Citation]) -> tuple[Citation, ...]:
    merged = list(existing)
    seen = {c.tool_use_id for c in merged}
    for citation in new:
        if citation.tool_use_id not in seen:
            seen.add(citation.tool_use_id)
            merged.append(citation)
    return tuple(merged)
