"""The ``research`` target: a batch run; memory wired once at boot, shared by every branch."""

from __future__ import annotations

from specwire.emitters.bundle import Bundle
from specwire.emitters.common import agent_context, emit_plan
from specwire.ir.model import IrResearch


def emit(spec: IrResearch) -> Bundle:
    origins = spec.retrieve.allowed_origins if spec.retrieve is not None else ()
    context = {
        **agent_context(spec.agent, spec.tools),
        "goal": spec.goal,
        "branching_factor": spec.branching_factor,
        "max_duration_ms": spec.max_duration_ms,
        "allowed_origins": tuple(origins),
    }
    return emit_plan(spec=spec, context=context, model=spec.agent.model)
