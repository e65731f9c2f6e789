"""Models the agent loop talks to: the ``Model`` protocol, the scripted models, selection.

``select_model(model_id)`` honours ``$SPECWIRE_MODEL`` over the spec's id. ``scripted`` (or
``scripted/<anything>``) is the offline, deterministic scripted model; with ``$SPECWIRE_SCRIPT``
pointing at a JSON file it replays those responses in order instead. ``anthropic/<m>`` /
``claude-*`` use the Anthropic adapter, ``openai/<m>`` / ``gpt-*`` / ``o<digit>…`` the OpenAI one,
``openai-compatible/<m>`` the OpenAI SDK at ``$OPENAI_BASE_URL``; the SDKs are imported only
then. Any other id raises ``ModelUnavailableError``. ``scripted/failing`` fails every call with a
retryable error, to show a ``FallbackModel`` (``runtime.models.fallback``) at work offline.

The scripted model follows one directive per user message (details in ``scripted.py``):

- ``remember: <fact>`` → ``Remember {text}``
- ``recall: <query>`` → ``Recall {query}``
- ``focus: <text>`` → ``FocusWrite {focus}``
- ``plan: <title>: <step>; <step>`` → ``PlanUpdate {action: create, title, steps}``
- ``claim <n>`` → ``PlanUpdate {action: set_step_status, step: n, status: claimed}``
- ``prove <n>`` → ``PlanComplete {step: n, evidence: [{toolUseId: <latest successful
  non-memory tool call>}]}``
- ``call <ToolName> <json>`` → that tool with that input
- ``forget: <query>`` → ``MemoryForget {query, reason}``
- anything else → ``Noted: <message>.`` (+ ``From memory: …`` / ``Resuming: …`` from the prompt)

After a tool result it answers ``Done: <first line>`` or ``That failed: <first line>``.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from specwire.runtime.models.errors import (
        ModelCallError,
        ModelConfigError,
        ModelError,
        ModelUnavailableError,
    )
    from specwire.runtime.models.replay import ReplayModel
    from specwire.runtime.models.scripted import ScriptedModel
    from specwire.runtime.models.select import select_model
    from specwire.runtime.models.types import (
        AssistantMessage,
        Message,
        Model,
        ModelRequest,
        ModelResponse,
        SystemBlock,
        SystemBlockKind,
        ToolCall,
        ToolResultMessage,
        ToolSpec,
        Usage,
        UserMessage,
    )

# The public names load on first use (PEP 562): a bundle that needs ``ModelError`` or
# ``Model`` does not import the replay model, nor the scripted one when it talks to a real one.
_HOMES = {
    "ModelCallError": "errors",
    "ModelConfigError": "errors",
    "ModelError": "errors",
    "ModelUnavailableError": "errors",
    "ReplayModel": "replay",
    "ScriptedModel": "scripted",
    "select_model": "select",
    "AssistantMessage": "types",
    "Message": "types",
    "Model": "types",
    "ModelRequest": "types",
    "ModelResponse": "types",
    "SystemBlock": "types",
    "SystemBlockKind": "types",
    "ToolCall": "types",
    "ToolResultMessage": "types",
    "ToolSpec": "types",
    "Usage": "types",
    "UserMessage": "types",
}

__all__ = [
    "AssistantMessage",
    "Message",
    "Model",
    "ModelCallError",
    "ModelConfigError",
    "ModelError",
    "ModelRequest",
    "ModelResponse",
    "ModelUnavailableError",
    "ReplayModel",
    "ScriptedModel",
    "SystemBlock",
    "SystemBlockKind",
    "ToolCall",
    "ToolResultMessage",
    "ToolSpec",
    "Usage",
    "UserMessage",
    "select_model",
]


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(f"{__name__}.{home}"), name)
