"""Builtin tools a spec may list under ``tools:`` (read, write, ls, grep, bash)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from runtime.tools import ToolCatalog

BUILTIN_TOOL_NAMES: tuple[str, ...] = ("bash", "grep", "ls", "read", "write")


def builtin_catalog(names: Sequence[str], cwd: Path | None = None) -> ToolCatalog:
    raise NotImplementedError
