"""The cli host: a terminal REPL with slash commands around ``run_chat_loop``."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from runtime.seams import LoopOptions
from runtime.tools import ToolCatalog


def run_cli(
    *,
    spec_name: str,
    model: str,
    instructions: str,
    catalog: ToolCatalog,
    cwd: Path | None = None,
    options: LoopOptions | None = None,
    argv: Sequence[str] | None = None,
) -> int:
    raise NotImplementedError  # implemented by the agent-loop work
