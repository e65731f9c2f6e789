"""The ``cli`` target: a terminal agent; memory wired once at boot, spec scope."""

from __future__ import annotations

from specwire.emitters.bundle import Bundle
from specwire.emitters.common import agent_context, emit_plan
from specwire.ir.model import IrCli


def emit(spec: IrCli) -> Bundle:
    return emit_plan(
        spec=spec,
        context=agent_context(spec.agent, spec.tools),
        model=spec.agent.model,
    )
