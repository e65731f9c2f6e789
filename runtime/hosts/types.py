"""Shapes shared by the hosts and the bundles that start them."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from specwire.runtime.core.seams import LoopOptions
from specwire.runtime.core.tenancy import Tenant
from specwire.runtime.core.tool_types import ToolCatalog
from specwire.runtime.safety.secrets import SecretRef, SettingValue
from specwire.runtime.wiring import HostResources


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
    name: str
    settings: dict[str, SettingValue]


@dataclass(frozen=True)
class TenantConfig:
    id: str
    max_input_tokens: int | None = None
    max_output_tokens: int | None = None


@dataclass(frozen=True)
class RoleConfig:
    name: str
    instructions: str
    model: str | SecretRef | None = None  # a secret reference is read when the role starts
    # The role's sessions take these in turn instead of ``model`` (``RoleModels.for_role``).
    model_pool: tuple[str | SecretRef, ...] = ()
    # Tried in order when the chosen model fails with a retryable error.
    model_fallbacks: tuple[str | SecretRef, ...] = ()


SessionBuilder = Callable[[], TurnSetup]
# ``build_turn(session_id, resources)``: the host lends its resources to every turn.
ChannelTurnBuilder = Callable[[str, HostResources], TurnSetup]
# ``build_turn(tenant, session_id, resources)``.
ManagedTurnBuilder = Callable[[Tenant, str, HostResources], TurnSetup]
