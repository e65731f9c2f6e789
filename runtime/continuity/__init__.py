"""Continuity: working memory (focus, requirements ledger, plans, goals, handoff) as plain files.

``build_continuity`` wires it from the fragment; ``ContinuityStore`` is the store (a façade over
one module per concern, listed in ``store.py``); the tools are ``continuity_tools``. The folder
layout is in ``state_folder.py``, the proof modes in ``proof_policy.py``.
"""

from specwire.runtime.continuity.proof import EvidenceRef, FrozenProof
from specwire.runtime.continuity.store import (
    ClearResult,
    ContinuityStore,
    GoalChange,
    StepCompletion,
)
from specwire.runtime.continuity.tools import continuity_tools
from specwire.runtime.continuity.wiring import ContinuityWiring, build_continuity

__all__ = [
    "ClearResult",
    "ContinuityStore",
    "ContinuityWiring",
    "EvidenceRef",
    "FrozenProof",
    "GoalChange",
    "StepCompletion",
    "build_continuity",
    "continuity_tools",
]
