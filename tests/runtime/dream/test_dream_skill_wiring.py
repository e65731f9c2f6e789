"""``memory.dream`` offers the ``dream`` skill and the ``/dream`` command; without it, neither."""

from __future__ import annotations

from pathlib import Path

from specwire.runtime.core.tool_types import ToolCatalog
from specwire.runtime.wiring import MemoryDeps, wire_memory


def _wired(tmp_path: Path, memory: dict[str, object]) -> tuple[set[str], set[str]]:
    fragment = {"spec_name": "dreamy", "memory": memory}
    deps = MemoryDeps(catalog=ToolCatalog(), cwd=tmp_path, home_dir=tmp_path, log=lambda _: None)
    wired = wire_memory(fragment, deps)
    try:
        skills = {skill.name for skill in wired.options.get("skills") or []}
        commands = set(wired.options.get("slash_commands") or {})
    finally:
        wired.close()
    return skills, commands


def test_a_dream_offers_its_skill_and_command(tmp_path: Path) -> None:
    skills, commands = _wired(tmp_path, {"dream": {"every_ms": 3_600_000}})
    assert "dream" in skills and "dream" in commands


def test_no_dream_no_skill_and_no_command(tmp_path: Path) -> None:
    skills, commands = _wired(tmp_path, {})
    assert "dream" not in skills and "dream" not in commands
