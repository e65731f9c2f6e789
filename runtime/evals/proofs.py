"""The plan steps a sample left marked ``proven``, each checked again against the session logs.

Every plan file under the spec's continuity folder (spec scope and session scopes) is read; a
step marked proven is *backed* when at least one of its frozen proofs still resolves, with the
proof ladder's own checker (``runtime.continuity.proof.check_evidence``), to a tool call the host
recorded with a non-error result that is not one of the agent's memory tools. A proven step with
no proof, or whose proofs all fail the check, is an unbacked claim. A plan file that does not
parse is skipped (it proves nothing).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from specwire.runtime.continuity.plans import Plan, parse_plan
from specwire.runtime.continuity.proof import EvidenceRef, check_evidence
from specwire.runtime.core.clock import utc_now
from specwire.runtime.core.fragment import PLAN_FILE_PATTERN

_PLAN_FILE = re.compile(PLAN_FILE_PATTERN)


@dataclass(frozen=True)
class ProvenStep:
    plan_id: str
    number: int
    text: str
    backed: bool


def read_plans(state_dir: Path) -> list[Plan]:
    """Every readable plan under ``state_dir`` (``plans/`` and ``sessions/*/plans/``)."""
    plans: list[Plan] = []
    if not state_dir.is_dir():
        return plans
    for path in sorted(state_dir.glob("**/plans/plan-*.md")):
        match = _PLAN_FILE.match(path.name)
        if match is None or not path.is_file() or path.is_symlink():
            continue
        try:
            text = path.read_text(encoding="utf-8")
            plans.append(parse_plan(text, file_id=match.group(1), file_slug=match.group(2)))
        except (OSError, UnicodeDecodeError, ValueError):
            continue
    return plans


def proven_steps(plans: list[Plan], sessions_dir: Path) -> list[ProvenStep]:
    """The steps marked proven in ``plans``, each with whether its evidence checks out."""
    found: list[ProvenStep] = []
    now = utc_now()
    for plan in plans:
        for number, step in enumerate(plan.steps, start=1):
            if step.status != "proven":
                continue
            backed = False
            for proof in plan.proofs.get(number, ()):
                ref = EvidenceRef(proof.tool_use_id, proof.session_id)
                checks = check_evidence(
                    sessions_dir, [ref], default_session_id=proof.session_id, now=now
                )
                if checks and checks[0].verdict == "verified":
                    backed = True
                    break
            found.append(ProvenStep(plan.id, number, step.text, backed))
    return found
