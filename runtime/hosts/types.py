"""Shapes shared by the hosts and the bundles that start them."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import field
from importlib import import_module
from typing import TYPE_CHECKING, Any

from specwire.runtime.core.lazy_dataclass import lazy_methods_dataclass
from specwire.runtime.core.scopes import Audience
from specwire.runtime.core.seams import LoopOptions
from specwire.runtime.core.tool_types import ToolCatalog

if TYPE_CHECKING:
    from specwire.runtime.hosts.configs import ChannelConfig, RoleConfig, TenantConfig

# What only the channel, managed and crew hosts configure (``hosts/configs.py``): named here as
# before, created on first use, so a cli bundle never builds their dataclasses.
_CONFIGS = ("ChannelConfig", "RoleConfig", "TenantConfig")

__all__ = [
    "ChannelConfig",
    "ChannelTurnBuilder",
    "ManagedTurnBuilder",
    "RoleConfig",
    "SessionBuilder",
    "TenantConfig",
    "TurnSetup",
    "build_with_audience",
    "takes_audience",
]


def __getattr__(name: str) -> Any:
    if name in _CONFIGS:
        return getattr(import_module("specwire.runtime.hosts.configs"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@lazy_methods_dataclass
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
