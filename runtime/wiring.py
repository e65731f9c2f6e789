"""The composition root: ``wire_memory(fragment, deps)`` wires every enabled memory tier."""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from runtime.events import Clock
from runtime.fragment import MemoryWiringFragment
from runtime.seams import LoopOptions
from runtime.tenancy import Tenant
from runtime.tools import Catalog, EventSink, Tool


def _stderr(line: str) -> None:
    sys.stderr.write(line)


@dataclass
class MemoryDeps:
    catalog: Catalog
    cwd: Path
    tenant: Tenant | None = None
    session_root_dir: Path | None = None
    session_scope: str | None = None
    append_event: EventSink | None = None
    embedder: Any = None
    log: Callable[[str], None] = _stderr
    home_dir: Path | None = None
    now: Clock | None = None


@dataclass
class WiredStores:
    memory: Any = None
    continuity: Any = None
    wiki: Any = None


@dataclass
class WiredMemory:
    stores: WiredStores = field(default_factory=WiredStores)
    tools: list[Tool] = field(default_factory=list)
    options: LoopOptions = field(default_factory=lambda: LoopOptions())


def wire_memory(
    fragment: MemoryWiringFragment | Mapping[str, Any], deps: MemoryDeps
) -> WiredMemory:
    raise NotImplementedError
