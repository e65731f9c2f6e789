"""The ``channel`` target: a chat bot; memory wired per turn, scoped to the session; the spec's
MCP tool servers started once at start and shared by every conversation."""

from __future__ import annotations

from typing import Any

from specwire.emitters.bundle import Bundle
from specwire.emitters.common import EnvVar, agent_context, emit_plan, serve_env
from specwire.emitters.literals import md_code
from specwire.emitters.tool_servers import server_literals, server_secrets, server_strings
from specwire.ir.model import IrChannelSpec, SecretRef
from specwire.runtime.core.fragment import SLACK_BOT_SCOPES, SLACK_EVENT_SUBSCRIPTIONS


def _settings(spec: IrChannelSpec) -> list[dict[str, Any]]:
    return [
        {
            "name": channel.name,
            "settings": [
                {
                    "key": key,
                    "secret": isinstance(value, SecretRef),
                    "value": value.env if isinstance(value, SecretRef) else value,
                }
                for key, value in channel.settings
            ],
        }
        for channel in spec.channels
    ]


def _secrets(spec: IrChannelSpec) -> list[EnvVar]:
    return [
        EnvVar(value.env, f"secret: {md_code(key)} of channel {md_code(channel.name)}")
        for channel in spec.channels
        for key, value in channel.settings
        if isinstance(value, SecretRef)
    ]


def emit(spec: IrChannelSpec) -> Bundle:
    context = {
        **agent_context(spec.agent, spec.tools),
        "session_key": spec.session_key,
        "channels": _settings(spec),
        "channel_names": [channel.name for channel in spec.channels],
        "slack": any(channel.name == "slack" for channel in spec.channels),
        "webhook": any(channel.name == "webhook" for channel in spec.channels),
        "slack_events": list(SLACK_EVENT_SUBSCRIPTIONS),
        "slack_scopes": list(SLACK_BOT_SCOPES),
        "mcp_servers": server_literals(spec.mcp_servers),
    }
    return emit_plan(
        spec=spec,
        context=context,
        model=spec.agent.model,
        secrets=[*_secrets(spec), *server_secrets(spec.mcp_servers)],
        extra_env=serve_env(slack=any(channel.name == "slack" for channel in spec.channels)),
        user_strings=(
            spec.session_key,
            *(channel.name for channel in spec.channels),
            *(key for channel in spec.channels for key, _ in channel.settings),
            *(var.name for var in _secrets(spec)),
            *server_strings(spec.mcp_servers),
        ),
    )
