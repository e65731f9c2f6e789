"""The managed host: a multi-tenant service; every turn runs fenced inside its tenant's root."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from runtime.hosts.types import ManagedTurnBuilder, TenantConfig


def serve_managed(
    *,
    spec_name: str,
    model: str,
    instructions: str,
    tenants: Sequence[TenantConfig],
    build_turn: ManagedTurnBuilder,
    root: Path | None = None,
    argv: Sequence[str] | None = None,
) -> int:
    raise NotImplementedError
