"""The ``crew`` target: roles sharing one catalog; memory wired once at boot for all roles."""

from __future__ import annotations

from emitters.bundle import Bundle
from emitters.common import emit_plan, model_secret, model_value
from emitters.literals import md_code
from ir.model import IrCrew


def emit(spec: IrCrew) -> Bundle:
    roles = [
        {
            "name": role.name,
            "instructions": role.instructions,
            "model": model_value(role.model) if role.model is not None else None,
        }
        for role in spec.roles
    ]
    context = {
        "entry": spec.entry,
        "tools": spec.tools,
        "roles": roles,
    }
    role_strings = [
        text
        for role in spec.roles
        for text in (
            role.name,
            *((model_value(role.model).spelling,) if role.model is not None else ()),
        )
    ]
    return emit_plan(
        spec=spec,
        context=context,
        model=spec.model,
        secrets=[
            var
            for role in spec.roles
            for var in model_secret(role.model, f" of role {md_code(role.name)}")
        ],
        user_strings=(spec.entry, *role_strings),
    )
