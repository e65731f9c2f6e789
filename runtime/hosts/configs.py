"""What the channel, managed and crew hosts configure: a channel, a tenant, a crew role.

``runtime.hosts.types`` names them too (loaded from here on first use).
"""

from __future__ import annotations

from dataclasses import dataclass

from specwire.runtime.safety.secrets import SecretRef, SettingValue


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
