"""The crew host: several roles sharing one catalog and one set of stores."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from runtime.hosts.types import RoleConfig
from runtime.seams import LoopOptions
from runtime.tools import ToolCatalog


def run_crew(
    *,
    spec_name: str,
    model: str,
    entry: str,
    roles: Sequence[RoleConfig],
    catalog: ToolCatalog,
    cwd: Path | None = None,
    options: LoopOptions | None = None,
    argv: Sequence[str] | None = None,
) -> int:
    raise NotImplementedError
