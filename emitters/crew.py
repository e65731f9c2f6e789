"""The ``crew`` target: roles sharing one catalog; memory wired once at boot for all roles; the
spec's MCP tool servers (``mcp_servers``) started once at the start, offered to every role."""

from __future__ import annotations

from typing import Any

from specwire.emitters.bundle import Bundle
from specwire.emitters.common import EnvVar, emit_plan, model_secret, model_value
from specwire.emitters.literals import md_code
from specwire.emitters.tool_servers import server_literals, server_secrets, server_strings
from specwire.ir.model import IrCrew, IrRole, ModelRef


def emit(spec: IrCrew) -> Bundle:
    context = {
        "entry": spec.entry,
        "tools": spec.tools,
        "roles": [_role(role) for role in spec.roles],
        "mcp_servers": server_literals(spec.mcp_servers),
    }
    role_strings = [
        text
        for role in spec.roles
        for text in (role.name, *(model_value(model).spelling for model in _models(role)))
    ]
    return emit_plan(
        spec=spec,
        context=context,
        model=spec.model,
        secrets=[
            *(var for role in spec.roles for var in _role_secrets(role)),
            *server_secrets(spec.mcp_servers),
        ],
        user_strings=(spec.entry, *role_strings, *server_strings(spec.mcp_servers)),
    )


def _role(role: IrRole) -> dict[str, Any]:
    """The template's view of a role; ``model_pool`` / ``model_fallbacks`` are empty lists when
    the spec does not declare them (and the template writes nothing for them then)."""
    return {
        "name": role.name,
        "instructions": role.instructions,
        "model": model_value(role.model) if role.model is not None else None,
        "model_pool": [model_value(model) for model in role.model_pool],
        "model_fallbacks": [model_value(model) for model in role.model_fallbacks],
    }


def _models(role: IrRole) -> tuple[ModelRef, ...]:
    own = (role.model,) if role.model is not None else ()
    return (*own, *role.model_pool, *role.model_fallbacks)


def _role_secrets(role: IrRole) -> list[EnvVar]:
    name = md_code(role.name)
    return [
        *model_secret(role.model, f" of role {name}"),
        *(
            var
            for model in role.model_pool
            for var in model_secret(model, f" in role {name}'s pool")
        ),
        *(
            var
            for model in role.model_fallbacks
            for var in model_secret(model, f" among role {name}'s fallbacks")
        ),
    ]
