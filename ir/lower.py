"""IR → the memory wiring fragment: only declared memory fields, continuity as resolved.

The IR's memory and continuity settings already are fragment types, so lowering adds the
contract's version and the specwire that built it, and nothing else.
"""

from __future__ import annotations

from specwire.ir.model import IrSpec
from specwire.runtime.core.fragment import FRAGMENT_VERSION, SPECWIRE_VERSION, MemoryWiringFragment


def lower(ir: IrSpec) -> MemoryWiringFragment:
    return MemoryWiringFragment(
        spec_name=ir.name,
        version=FRAGMENT_VERSION,
        specwire=SPECWIRE_VERSION,
        memory=ir.memory,
        continuity=ir.continuity,
    )
