"""IR → the memory wiring fragment: only declared memory fields, continuity as resolved.

The IR's memory and continuity settings already are fragment types, so lowering adds the
contract's version and the specwire that built it, and nothing else. The version is the lowest
that reads the bundle: ``mcp_servers`` on a target whose host took them after cli
(``MCP_HOST_TARGETS``), a heartbeat study, learning into
Thredz's wiki or per-person continuity (continuity scope ``audience``, managed's ``auto``) need
version 7; state in PostgreSQL (``memory.state``), ``learning``, dream price overrides or
``thredz`` need version 6; one with a memory protocol, provider tools, several providers or
document bindings needs version 5; a target whose host passes an ``Audience`` to the bundle, or
a fragment with a memory scope or tiers, needs version 4; anything else still says 3, so a cli
or research bundle without those keys is byte-identical to one built before them.
"""

from __future__ import annotations

from specwire.ir.model import IrSpec
from specwire.runtime.core.fragment import (
    FRAGMENT_VERSION,
    PRE_SCOPES_FRAGMENT_VERSION,
    PROVIDERS_FRAGMENT_VERSION,
    SCOPES_FRAGMENT_VERSION,
    SPECWIRE_VERSION,
    STATE_FRAGMENT_VERSION,
    MemoryWiringFragment,
)

# Targets whose generated builders take the host's audience (bundle interface 4).
AUDIENCE_TARGETS: frozenset[str] = frozenset({"channel", "managed", "crew"})
# Targets whose host takes the spec's ``mcp_servers`` from fragment version 7 on (cli's always did).
MCP_HOST_TARGETS: frozenset[str] = frozenset({"channel", "managed", "crew", "research"})


def lower(ir: IrSpec) -> MemoryWiringFragment:
    return MemoryWiringFragment(
        spec_name=ir.name,
        version=fragment_version(ir),
        specwire=SPECWIRE_VERSION,
        memory=ir.memory,
        continuity=ir.continuity,
        learning=ir.learning,
        thredz=getattr(ir, "thredz", None),
    )


def fragment_version(ir: IrSpec) -> int:
    if ir.target in MCP_HOST_TARGETS and bool(getattr(ir, "mcp_servers", None)):
        # Their host takes the servers (``serve_channel(mcp_servers=…)``, ``run_crew``,
        # ``run_research``) from version 7 on: an
        # older runtime refuses the fragment in one line instead of failing on the argument.
        return FRAGMENT_VERSION
    if ir.continuity is not None and ir.continuity.scope == "audience":
        # A person's continuity (managed ``auto``): a version-6 runtime would not know the scope
        # and, run anyway, would keep it in the tenant's folder, shared by its users.
        return FRAGMENT_VERSION
    memory = ir.memory
    thredz = getattr(ir, "thredz", None)
    own_wiki = (
        memory is not None
        and memory.enabled is not False
        and memory.wiki is not None
        and memory.wiki.enabled is not False
    )
    if ir.learning is not None and (
        ir.learning.study_on_heartbeat or (thredz is not None and not own_wiki)
    ):
        return FRAGMENT_VERSION
    if ir.learning is not None:
        return STATE_FRAGMENT_VERSION
    if memory is not None and memory.state is not None:
        return STATE_FRAGMENT_VERSION
    if memory is not None and memory.dream is not None and memory.dream.prices is not None:
        return STATE_FRAGMENT_VERSION
    if thredz is not None:
        return STATE_FRAGMENT_VERSION
    if memory is not None and any(
        field is not None
        for field in (memory.protocol, memory.tools, memory.providers, memory.documents)
    ):
        return PROVIDERS_FRAGMENT_VERSION
    scoped = memory is not None and (memory.scope is not None or memory.tiers is not None)
    if ir.target in AUDIENCE_TARGETS or scoped:
        return SCOPES_FRAGMENT_VERSION
    return PRE_SCOPES_FRAGMENT_VERSION
