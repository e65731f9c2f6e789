"""The system blocks the agent loop puts in front of the model, and their delimiters.

Text from memory (recalled facts, the handoff note) is data, not instructions: it is wrapped in
a tagged block, and any tag inside it that could open or close that block is escaped, so a
remembered fact can never end the block early and speak with the system's voice.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from runtime.models.types import SystemBlock
from runtime.seams import Skill

RECALL_TAG = "recalled_memory"
RECALL_HEADER = "Relevant facts remembered from earlier sessions:"
HANDOFF_TAG = "handoff"
HANDOFF_HEADER = (
    "The handoff note the previous session left (its plan, requirements and next actions):"
)
SKILLS_HEADER = "Skills you can load with the Skill tool when one applies:"


def escape_delimiter(text: str, tag: str) -> str:
    """Neutralize ``<tag>`` and ``</tag>`` (any case, any inner spacing) inside ``text``."""
    pattern = re.compile(rf"<\s*(/?)\s*{re.escape(tag)}\s*>", re.IGNORECASE)
    return pattern.sub(lambda m: f"&lt;{m.group(1)}{tag}&gt;", text)


def recalled_line(line: str) -> str:
    """One recalled fact as one bullet line: whitespace collapsed, delimiters escaped."""
    return escape_delimiter(" ".join(line.split()), RECALL_TAG)


def recalled_memory_block(lines: Sequence[str]) -> SystemBlock | None:
    bullets = [f"- {recalled_line(line)}" for line in lines if line.strip()]
    if not bullets:
        return None
    body = "\n".join([RECALL_HEADER, *bullets])
    return SystemBlock("recalled_memory", f"<{RECALL_TAG}>\n{body}\n</{RECALL_TAG}>")


def handoff_block(note: str | None) -> SystemBlock | None:
    if note is None or not note.strip():
        return None
    body = escape_delimiter(note.strip(), HANDOFF_TAG)
    return SystemBlock("handoff", f"<{HANDOFF_TAG}>\n{HANDOFF_HEADER}\n{body}\n</{HANDOFF_TAG}>")


def continuity_tail_block(tail: str | None) -> SystemBlock | None:
    """The rendered plan tail, shown as the continuity seam renders it."""
    if tail is None or not tail.strip():
        return None
    return SystemBlock("continuity_tail", tail.strip())


def skills_block(skills: Sequence[Skill]) -> SystemBlock | None:
    if not skills:
        return None
    lines = [f"- {skill.name}: {' '.join(skill.description.split())}" for skill in skills]
    return SystemBlock("skills", "\n".join(["<skills>", SKILLS_HEADER, *lines, "</skills>"]))


def blocks_payload(blocks: Sequence[SystemBlock]) -> list[dict[str, str]]:
    """The blocks as they go into a ``context`` event."""
    return [{"kind": block.kind, "text": block.text} for block in blocks]
