"""The ``managed`` target: multi-tenant; memory wired per turn, fenced to the tenant's root; the
spec's MCP tool servers started at start, one instance of each per tenant."""

from __future__ import annotations

from typing import Any

from specwire.emitters.bundle import Bundle
from specwire.emitters.common import EnvVar, agent_context, emit_plan, serve_env
from specwire.emitters.literals import md_code
from specwire.emitters.tool_servers import server_literals, server_secrets, server_strings
from specwire.ir.model import IrManaged
from specwire.runtime.core.fragment import TENANTS_ROOT_ENV, tenant_key_variable

TENANTS_ROOT_VAR = EnvVar(
    TENANTS_ROOT_ENV,
    f"where tenant roots live (optional; default {md_code('.specwire/tenants/')} "
    "in the working directory)",
)


def emit(spec: IrManaged) -> Bundle:
    tenants: list[dict[str, Any]] = [
        {
            "id": tenant.id,
            "max_input_tokens": tenant.budget.max_input_tokens if tenant.budget else None,
            "max_output_tokens": tenant.budget.max_output_tokens if tenant.budget else None,
        }
        for tenant in spec.tenants
    ]
    context = {
        **agent_context(spec.agent, spec.tools),
        "tenants": tenants,
        "tenant_ids": [tenant.id for tenant in spec.tenants],
        "first_key_var": tenant_key_variable(spec.tenants[0].id),
        "mcp_servers": server_literals(spec.mcp_servers),
    }
    keys = [
        EnvVar(
            tenant_key_variable(tenant.id),
            f"secret: tenant {md_code(tenant.id)}'s API key for {md_code('serve')} "
            "(16 characters or more; without it the tenant is refused)",
        )
        for tenant in spec.tenants
    ]
    return emit_plan(
        spec=spec,
        context=context,
        model=spec.agent.model,
        extra_env=(TENANTS_ROOT_VAR, *serve_env()),
        secrets=[*keys, *server_secrets(spec.mcp_servers)],
        user_strings=[
            *(tenant.id for tenant in spec.tenants),
            *server_strings(spec.mcp_servers),
        ],
    )
