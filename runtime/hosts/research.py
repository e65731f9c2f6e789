"""The research host: a batch run that explores ``branching_factor`` branches toward a goal."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from runtime.seams import LoopOptions
from runtime.tools import ToolCatalog


def run_research(
    *,
    spec_name: str,
    model: str,
    instructions: str,
    goal: str,
    branching_factor: int,
    max_duration_ms: int,
    allowed_origins: Sequence[str],
    catalog: ToolCatalog,
    cwd: Path | None = None,
    options: LoopOptions | None = None,
    argv: Sequence[str] | None = None,
) -> int:
    raise NotImplementedError
