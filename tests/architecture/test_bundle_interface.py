"""Generated bundles import one runtime module, whose names are pinned with its version."""

from __future__ import annotations

import ast
from pathlib import Path

from specwire.runtime import bundle
from specwire.runtime.core.fragment import FRAGMENT_VERSION

ROOT = Path(__file__).resolve().parents[2]

# Changing this set is a new bundle interface: bump BUNDLE_INTERFACE and FRAGMENT_VERSION.
# 4 added ``Audience`` (the per-conversation builders take the host's audience); every name of 3
# is still there, so a bundle built for 3 runs unchanged.
PINNED_3 = [
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
# 6 (the fragment's ``memory.state``, ``learning``, dream prices and ``thredz``) changes no name.
PINNED = {
    3: PINNED_3,
    4: ["Audience", *PINNED_3],
    5: ["Audience", *PINNED_3],
    6: ["Audience", *PINNED_3],
    7: ["Audience", *PINNED_3],
}


def test_the_interface_is_pinned_and_versioned_with_the_fragment() -> None:
    assert bundle.BUNDLE_INTERFACE == FRAGMENT_VERSION
    assert bundle.__all__ == PINNED[bundle.BUNDLE_INTERFACE]


def test_every_name_of_the_interface_resolves() -> None:
    for name in bundle.__all__:
        assert getattr(bundle, name) is not None, name


def test_every_snapshot_bundle_imports_only_the_interface() -> None:
    agents = sorted((ROOT / "snapshots").glob("*/agent.py"))
    assert agents
    for agent in agents:
        tree = ast.parse(agent.read_text(encoding="utf-8"))
        modules = {
            node.module
            for node in ast.walk(tree)
            if isinstance(node, ast.ImportFrom) and node.module is not None
        } | {
            alias.name
            for node in ast.walk(tree)
            if isinstance(node, ast.Import)
            for alias in node.names
        }
        ours = {m for m in modules if m.split(".")[0] == "specwire"}
        assert ours == {"specwire.runtime.bundle"}, (agent, ours)
        imported = {
            alias.name
            for node in ast.walk(tree)
            if isinstance(node, ast.ImportFrom) and node.module == "specwire.runtime.bundle"
            for alias in node.names
        }
        assert imported <= set(bundle.__all__), agent


def test_a_bundle_imports_only_the_names_of_its_fragment_version() -> None:
    """A cli or research bundle that says version 3 runs on a version-3 runtime: it imports
    nothing version 4 added."""
    for agent in sorted((ROOT / "snapshots").glob("*/agent.py")):
        source = agent.read_text(encoding="utf-8")
        tree = ast.parse(source)
        imported = {
            alias.name
            for node in ast.walk(tree)
            if isinstance(node, ast.ImportFrom) and node.module == "specwire.runtime.bundle"
            for alias in node.names
        }
        version = 3 if '"version": 3,' in source else 4
        assert imported <= set(PINNED[version]), (agent, imported - set(PINNED[version]))
