"""``wire_tier_notes``: the tiers part of ``wire_memory`` when ``memory.tiers`` is on.

It takes the facts tier's provider (so notes live on whatever backend the facts do), the
host's audience and the memory seam, and returns the four tools and the seam with the prompt's
memory blocks. A backend without keyed writes and point reads cannot hold notes: wiring stops
with one line, before the model is told about tools that cannot work.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from specwire.runtime.core.clock import Clock
from specwire.runtime.core.errors import MemoryServiceError
from specwire.runtime.core.fragment_data import FactsData
from specwire.runtime.core.scopes import Audience, Scope
from specwire.runtime.core.seams import MemoryBlockKind, MemorySeam
from specwire.runtime.core.tool_types import Tool
from specwire.runtime.facts.providers.protocol import FactProvider
from specwire.runtime.facts.tiers.notes import NoteProvider, TierNotes
from specwire.runtime.facts.tiers.prompt import AGENT_BLOCK_TIERS, CREW_BLOCK_TIERS, memory_blocks
from specwire.runtime.facts.tiers.tools import tier_tools


@dataclass(frozen=True)
class TierWiring:
    notes: TierNotes
    tools: list[Tool]
    seam: MemorySeam


def tier_notes_for(
    memory: FactsData, provider: FactProvider, audience: Audience | None, *, now: Clock
) -> TierNotes:
    """The notes ``audience`` reaches on ``provider`` under the spec's default scope."""
    capabilities = provider.capabilities()
    if not (isinstance(provider, NoteProvider) and capabilities.keys and capabilities.point_read):
        raise MemoryServiceError(
            "memory-service: memory.tiers needs a memory backend with keyed notes and point "
            f"reads, and {memory.backend or 'file'} does not offer them"
        )
    default: Scope = memory.scope.default if memory.scope is not None else "agent"
    return TierNotes(provider, audience or Audience(), default, now=now)


def wire_tier_notes(
    memory: FactsData,
    provider: FactProvider,
    audience: Audience | None,
    seam: MemorySeam | None,
    *,
    now: Clock,
    log: Callable[[str], None],
) -> TierWiring:
    notes = tier_notes_for(memory, provider, audience, now=now)
    tiers = AGENT_BLOCK_TIERS + CREW_BLOCK_TIERS

    def blocks() -> Sequence[tuple[MemoryBlockKind, str]]:
        found, withheld = notes.prompt_notes(tiers)
        if withheld:
            log(
                f"[memory] {len(withheld)} memory note(s) kept out of the prompt: the injection "
                f"scanner flagged {', '.join(withheld)}\n"
            )
        return memory_blocks(found, in_crew=notes.in_crew)

    tools = tier_tools(notes, log=log)
    log("[memory] memory_read/memory_write/memory_search/memory_append_daily wired (tiers)\n")
    wired_seam = dataclasses.replace(seam or MemorySeam(), memory_blocks=blocks)
    return TierWiring(notes, tools, wired_seam)
