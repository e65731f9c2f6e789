"""Shapes shared by the hosts and the bundles that start them."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from specwire.runtime.core.scopes import Audience
from specwire.runtime.core.seams import LoopOptions
from specwire.runtime.core.tool_types import ToolCatalog
from specwire.runtime.safety.secrets import SecretRef, SettingValue


@dataclass
class TurnSetup:
    """What a per-turn host needs for one turn: the tools and the wired loop options."""

    catalog: ToolCatalog
    options: LoopOptions = field(default_factory=lambda: LoopOptions())
    # Releases what the turn's wiring opened (the fact store's connection); the host calls it
    # once the turn is over.
    close: Callable[[], None] | None = None

    def release(self) -> None:
        if self.close is not None:
            self.close()


@dataclass(frozen=True)
class ChannelConfig:
    """A channel the spec configures: its name and settings."""

    name: str
    settings: dict[str, SettingValue]


@dataclass(frozen=True)
class TenantConfig:
    """A tenant the spec declares, with its token limits."""

    id: str
    max_input_tokens: int | None = None
    max_output_tokens: int | None = None


@dataclass(frozen=True)
class RoleConfig:
    """A crew role: its instructions, model and the models it falls back to."""

    name: str
    instructions: str
    model: str | SecretRef | None = None  # a secret reference is read when the role starts
    # The role's sessions take these in turn instead of ``model`` (``RoleModels.for_role``).
    model_pool: tuple[str | SecretRef, ...] = ()
    # Tried in order when the chosen model fails with a retryable error.
    model_fallbacks: tuple[str | SecretRef, ...] = ()


# Bundles built for interface 4 take the host's ``Audience`` as their last argument (crew:
# ``build_session(audience)``; channel: ``build_turn(session_id, resources, audience)``; managed:
# ``build_turn(tenant, session_id, resources, audience)``); bundles built for interface 3 do
# not, and the hosts still run them (``takes_audience``).
SessionBuilder = Callable[..., TurnSetup]
ChannelTurnBuilder = Callable[..., TurnSetup]
ManagedTurnBuilder = Callable[..., TurnSetup]


def takes_audience(builder: Callable[..., Any]) -> bool:
    """Whether a bundle's builder takes the host's audience (interface 4 and later)."""
    try:
        return "audience" in inspect.signature(builder).parameters
    except (TypeError, ValueError):  # a builtin or C callable: the old interface
        return False


def build_with_audience(
    builder: Callable[..., TurnSetup], takes: bool, audience: Audience, *args: Any
) -> TurnSetup:
    return builder(*args, audience) if takes else builder(*args)
