"""The ``crew`` target: roles sharing one catalog; memory wired once at boot for all roles."""

from __future__ import annotations

from emitters.bundle import Bundle
from emitters.common import emit_plan
from ir.model import IrCrew


def emit(spec: IrCrew) -> Bundle:
    context = {
        "model": spec.model,
        "entry": spec.entry,
        "tools": spec.tools,
        "roles": spec.roles,
    }
    role_strings = [s for role in spec.roles for s in (role.name, role.model or "")]
    return emit_plan(
        spec=spec,
        context=context,
        model=spec.model,
        user_strings=(spec.entry, *role_strings),
    )
