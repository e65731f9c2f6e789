"""Continuity: working memory (focus, requirements ledger, plans, goals, handoff) as plain files.

``build_continuity`` wires it from the fragment; ``ContinuityStore`` is the store; the tools are
``continuity_tools``. See ``store.py`` for the layout and the proof modes.
"""

from runtime.continuity.proof import EvidenceRef, FrozenProof
from runtime.continuity.store import ClearResult, ContinuityStore, GoalChange, StepCompletion
from runtime.continuity.tools import continuity_tools
from runtime.continuity.wiring import ContinuityWiring, build_continuity

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
