"""The bundle interface: the one module a generated ``agent.py`` imports from.

Everything a bundle names comes from here, so the runtime's layout can change without breaking a
bundle a user has committed. ``__all__`` is pinned by a test and moves with
``BUNDLE_INTERFACE`` (and the fragment version): removing or changing a name is a new interface,
and bundles built for an older one are told to rebuild with ``codegen build``.

Names load on first use (PEP 562): a cli bundle's ``from specwire.runtime.bundle import run_cli``
imports the cli host only, never the HTTP stack of the channel and managed hosts.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any, Final

from specwire.runtime.core.startup import collector_paused

if TYPE_CHECKING:
    from specwire.runtime.core.scopes import Audience
    from specwire.runtime.core.tenancy import Tenant
    from specwire.runtime.hosts.channel import serve_channel
    from specwire.runtime.hosts.cli import run_cli
    from specwire.runtime.hosts.configs import ChannelConfig, RoleConfig, TenantConfig
    from specwire.runtime.hosts.crew import run_crew
    from specwire.runtime.hosts.entry import run_bundle
    from specwire.runtime.hosts.managed import serve_managed
    from specwire.runtime.hosts.research import run_research
    from specwire.runtime.hosts.types import TurnSetup
    from specwire.runtime.safety.secrets import SecretRef
    from specwire.runtime.tools.builtin import builtin_catalog
    from specwire.runtime.wiring import HostResources, MemoryDeps, wire_memory

# The interface's version: the fragment version of the bundles that import it.
BUNDLE_INTERFACE: Final = 7

_HOMES: Final = {
    "Audience": "specwire.runtime.core.scopes",
    "ChannelConfig": "specwire.runtime.hosts.configs",
    "HostResources": "specwire.runtime.wiring",
    "MemoryDeps": "specwire.runtime.wiring",
    "RoleConfig": "specwire.runtime.hosts.configs",
    "SecretRef": "specwire.runtime.safety.secrets",
    "Tenant": "specwire.runtime.core.tenancy",
    "TenantConfig": "specwire.runtime.hosts.configs",
    "TurnSetup": "specwire.runtime.hosts.types",
    "builtin_catalog": "specwire.runtime.tools.builtin",
    "run_bundle": "specwire.runtime.hosts.entry",
    "run_cli": "specwire.runtime.hosts.cli",
    "run_crew": "specwire.runtime.hosts.crew",
    "run_research": "specwire.runtime.hosts.research",
    "serve_channel": "specwire.runtime.hosts.channel",
    "serve_managed": "specwire.runtime.hosts.managed",
    "wire_memory": "specwire.runtime.wiring",
}

__all__ = [
    "Audience",
    "BUNDLE_INTERFACE",
    "ChannelConfig",
    "HostResources",
    "MemoryDeps",
    "RoleConfig",
    "SecretRef",
    "Tenant",
    "TenantConfig",
    "TurnSetup",
    "builtin_catalog",
    "run_bundle",
    "run_cli",
    "run_crew",
    "run_research",
    "serve_channel",
    "serve_managed",
    "wire_memory",
]


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'specwire.runtime.bundle' has no attribute {name!r}")
    with collector_paused():  # the interface's imports: no cycles to look for
        value = getattr(import_module(home), name)
    globals()[name] = value
    return value
