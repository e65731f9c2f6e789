"""Models the agent loop talks to: the ``Model`` protocol, the scripted models, selection."""

from runtime.models.errors import ModelError, ModelUnavailableError
from runtime.models.replay import ReplayModel
from runtime.models.scripted import ScriptedModel
from runtime.models.select import select_model
from runtime.models.types import (
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
    UserMessage,
)

__all__ = [
    "AssistantMessage",
    "Message",
    "Model",
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
    "UserMessage",
    "select_model",
]
