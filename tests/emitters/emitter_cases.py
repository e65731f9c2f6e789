"""Shared inputs for the emitter tests (a plain module: conftest names are not unique)."""

from __future__ import annotations

import textwrap
from pathlib import Path

from specwire.emitters.bundle import Bundle
from specwire.emitters.registry import emit
from specwire.ir import IrSpec, load_spec_text

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES_DIR = ROOT / "examples"
EXAMPLES: tuple[Path, ...] = tuple(sorted(EXAMPLES_DIR.glob("*.yaml")))
EXAMPLE_STEMS: tuple[str, ...] = tuple(path.stem for path in EXAMPLES)
MEMORY_EXAMPLES: tuple[str, ...] = (
    "channel-helpdesk",
    "cli-memory-service",
    "cli-wiki",
    "crew-newsroom",
    "learning-billing",
    "managed-concierge",
    "managed-postgres",
    "ops-notes",
    "research-market",
    "support-bot",
    "support-memory-04",
)
MEMORYLESS_EXAMPLES: tuple[str, ...] = (
    "channel-plain",
    "cli-plain",
    "crew-plain",
    "managed-plain",
    "research-plain",
)


def spec_from_text(text: str, name: str = "spec.yaml") -> IrSpec:
    return load_spec_text(textwrap.dedent(text), name)


def emit_text(text: str) -> Bundle:
    return emit(spec_from_text(text))
