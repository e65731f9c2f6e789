"""The system blocks the agent loop puts in front of the model, and their delimiters.

Text from memory (recalled facts, the handoff note, skill descriptions) is data, not
instructions: it goes through ``runtime.safety.framing.frame``, so it can never end its block
early and speak with the system's voice.
"""

from __future__ import annotations

from collections.abc import Sequence

from specwire.runtime.core.seams import Skill
from specwire.runtime.models.types import SystemBlock
from specwire.runtime.safety.framing import frame, neutralize

RECALL_TAG = "recalled_memory"
RECALL_HEADER = "Relevant facts remembered from earlier sessions:"
HANDOFF_TAG = "handoff"
HANDOFF_HEADER = (
    "The handoff note the previous session left (its plan, requirements and next actions):"
)
SKILLS_HEADER = "Skills you can load with the Skill tool when one applies:"


def recalled_line(line: str) -> str:
    """One recalled fact as one bullet line: whitespace collapsed, tags escaped."""
    return neutralize(" ".join(line.split()))


def recalled_memory_block(lines: Sequence[str]) -> SystemBlock | None:
    bullets = [f"- {' '.join(line.split())}" for line in lines if line.strip()]
    if not bullets:
        return None
    return SystemBlock("recalled_memory", frame(RECALL_TAG, bullets, RECALL_HEADER))


def handoff_block(note: str | None) -> SystemBlock | None:
    if note is None or not note.strip():
        return None
    return SystemBlock("handoff", frame(HANDOFF_TAG, note.strip(), HANDOFF_HEADER))


def continuity_tail_block(tail: str | None) -> SystemBlock | None:
    """The rendered plan tail, shown as the continuity seam renders it."""
    if tail is None or not tail.strip():
        return None
    return SystemBlock("continuity_tail", tail.strip())


def skills_block(skills: Sequence[Skill]) -> SystemBlock | None:
    if not skills:
        return None
    lines = [f"- {skill.name}: {' '.join(skill.description.split())}" for skill in skills]
    return SystemBlock("skills", frame("skills", lines, SKILLS_HEADER))


def blocks_payload(blocks: Sequence[SystemBlock]) -> list[dict[str, str]]:
    """The blocks as they go into a ``context`` event."""
    return [{"kind": block.kind, "text": block.text} for block in blocks]
