"""The wiring matrix of ``wire_memory``: what is registered, in which order, with which options."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from specwire.runtime.core.errors import MemoryServiceError, TenancyError
from specwire.runtime.core.fragment import MemoryWiringFragment
from specwire.runtime.core.tenancy import build_tenant
from specwire.runtime.core.tool_types import ToolCatalog, ToolContext
from specwire.runtime.wiring import MemoryDeps, wire_continuity, wire_memory

FACTS = ["Remember", "Recall", "MemoryRead", "MemoryForget"]
CONTINUITY = [
    "FocusRead",
    "FocusWrite",
    "PlanRead",
    "PlanUpdate",
    "PlanComplete",
    "GoalWrite",
    "GoalUpdate",
    "GoalList",
    "MemoryClear",
]
CONTINUITY_ON = {"plan": True, "proof": "ladder", "ledger": True, "handoff": True, "scope": "spec"}


def fixed_now() -> datetime:
    return datetime(2026, 7, 1, 12, 0, tzinfo=UTC)


def deps_for(tmp_path: Path, **overrides: Any) -> tuple[MemoryDeps, ToolCatalog, list[str]]:
    catalog = ToolCatalog()
    lines: list[str] = []
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    fields: dict[str, Any] = {
        "catalog": catalog,
        "cwd": tmp_path,
        "log": lines.append,
        "home_dir": home,
        "now": fixed_now,
    }
    fields.update(overrides)
    return MemoryDeps(**fields), catalog, lines


def wire(tmp_path: Path, fragment: Mapping[str, Any], **overrides: Any) -> Any:
    deps, catalog, lines = deps_for(tmp_path, **overrides)
    return wire_memory(fragment, deps), catalog, lines


def test_memoryless_fragment_creates_nothing_and_registers_nothing(tmp_path: Path) -> None:
    wired, catalog, lines = wire(tmp_path, {"spec_name": "quiet"})
    assert wired.tools == [] and catalog.names() == [] and dict(wired.options) == {}
    assert lines == []
    assert sorted(p.name for p in tmp_path.iterdir()) == ["home"]


def test_disabled_memory_block_alone_wires_nothing(tmp_path: Path) -> None:
    wired, catalog, _ = wire(tmp_path, {"spec_name": "quiet", "memory": {"enabled": False}})
    assert catalog.names() == [] and dict(wired.options) == {}
    assert not (tmp_path / ".specwire").exists()


def test_facts_and_continuity_register_in_order_with_all_option_keys(tmp_path: Path) -> None:
    fragment = {"spec_name": "full", "memory": {}, "continuity": CONTINUITY_ON}
    wired, catalog, lines = wire(tmp_path, fragment)
    assert catalog.names() == FACTS + CONTINUITY
    assert [t.name for t in wired.tools] == FACTS + CONTINUITY
    assert sorted(wired.options) == ["continuity", "memory", "skills", "slash_commands"]
    assert sorted(wired.options["slash_commands"]) == sorted(
        ["plan", "focus", "next", "handoff", "clear-plan", "clear-focus", "forget"]
    )
    assert [s.name for s in wired.options["skills"]] == ["continuity"]
    assert any("Remember/Recall/MemoryRead/MemoryForget wired" in line for line in lines)
    assert any("continuity on" in line for line in lines)


def test_bare_memory_block_applies_runtime_defaults(tmp_path: Path) -> None:
    wired, _, _ = wire(tmp_path, {"spec_name": "facts", "memory": {}})
    seam = wired.options["memory"]
    assert seam.auto_recall is True and seam.recall is not None and seam.recall_k == 5
    assert seam.auto_capture is False and seam.on_capture is None
    assert sorted(wired.options) == ["memory", "slash_commands"]
    assert list(wired.options["slash_commands"]) == ["forget"]


def test_capture_on_and_recall_off_shape_the_seam(tmp_path: Path) -> None:
    memory = {"auto_recall": False, "auto_capture": True, "auto_capture_threshold": 3}
    wired, _, _ = wire(tmp_path, {"spec_name": "facts", "memory": memory})
    seam = wired.options["memory"]
    assert seam.recall is None and seam.auto_recall is False
    assert seam.on_capture is not None and seam.capture_threshold == 3


def test_continuity_alone_offers_no_forget_command(tmp_path: Path) -> None:
    wired, catalog, _ = wire(tmp_path, {"spec_name": "cont", "continuity": CONTINUITY_ON})
    assert catalog.names() == CONTINUITY
    assert "forget" not in wired.options["slash_commands"]
    assert "memory" not in wired.options


def test_plan_off_registers_only_focus_and_clear(tmp_path: Path) -> None:
    fragment = {"spec_name": "cont", "continuity": {**CONTINUITY_ON, "plan": False}}
    wired, catalog, _ = wire(tmp_path, fragment)
    assert catalog.names() == ["FocusRead", "FocusWrite", "MemoryClear"]
    # The plan commands would point at tools that are not registered.
    assert sorted(wired.options["slash_commands"]) == ["clear-focus", "focus"]


def test_project_and_home_overrides_take_precedence(tmp_path: Path) -> None:
    home_commands = tmp_path / "home" / ".specwire" / "commands"
    home_commands.mkdir(parents=True)
    (home_commands / "plan.md").write_text("---\ndescription: home plan\n---\nhome\n")
    project_commands = tmp_path / ".specwire" / "commands"
    project_commands.mkdir(parents=True)
    (project_commands / "plan.md").write_text("---\ndescription: project plan\n---\nproject\n")
    (project_commands / "deploy.md").write_text("---\ndescription: ship it\n---\nship $ARGUMENTS\n")
    project_skill = tmp_path / ".specwire" / "skills" / "continuity"
    project_skill.mkdir(parents=True)
    (project_skill / "SKILL.md").write_text("---\nname: continuity\n---\n\n")  # disables it

    wired, _, _ = wire(tmp_path, {"spec_name": "cont", "continuity": CONTINUITY_ON})
    commands = wired.options["slash_commands"]
    assert commands["plan"].source == "project" and commands["plan"].body == "project\n"
    assert commands["deploy"].render("now") == "ship now\n"
    assert "skills" not in wired.options


def test_missing_spec_name_fails_fast(tmp_path: Path) -> None:
    deps, _, _ = deps_for(tmp_path)
    with pytest.raises(MemoryServiceError, match="spec_name is required"):
        wire_memory({"spec_name": "  ", "memory": {}}, deps)
    with pytest.raises(MemoryServiceError, match="spec_name"):
        wire_memory({"memory": {}}, deps)


def test_unknown_backend_fails_fast_and_creates_nothing(tmp_path: Path) -> None:
    deps, catalog, _ = deps_for(tmp_path)
    with pytest.raises(MemoryServiceError, match='unknown memory backend "redis"'):
        wire_memory({"spec_name": "x", "memory": {"backend": "redis"}}, deps)
    assert catalog.names() == [] and not (tmp_path / ".specwire").exists()


def test_session_scope_without_a_session_fails_fast(tmp_path: Path) -> None:
    deps, catalog, _ = deps_for(tmp_path)
    fragment = {"spec_name": "x", "continuity": {**CONTINUITY_ON, "scope": "session"}}
    with pytest.raises(MemoryServiceError, match="session"):
        wire_memory(fragment, deps)
    assert catalog.names() == []


def test_a_disabled_wiki_wires_facts_only(tmp_path: Path) -> None:
    deps, _, _ = deps_for(tmp_path)
    disabled = {"spec_name": "x", "memory": {"wiki": {"enabled": False}}}
    wired = wire_memory(disabled, deps)
    assert [t.name for t in wired.tools] == FACTS and wired.stores.wiki is None


def test_invalid_fragment_names_the_field(tmp_path: Path) -> None:
    deps, _, _ = deps_for(tmp_path)
    with pytest.raises(MemoryServiceError, match="memory.recall_k"):
        wire_memory({"spec_name": "x", "memory": {"recall_k": 0}}, deps)


def test_tenant_reroots_every_store(tmp_path: Path) -> None:
    tenant = build_tenant("tenant-acme", tmp_path / "tenants")
    fragment = {
        "spec_name": "svc",
        "memory": {},
        "continuity": {**CONTINUITY_ON, "scope": "session"},
    }
    wired, _, _ = wire(tmp_path, fragment, tenant=tenant, session_scope="sess_0123456789abcdef")
    ctx = ToolContext(session_id="sess_0123456789abcdef", tool_use_id="tu_1")
    assert wired.stores.memory is not None and wired.stores.continuity is not None
    tools = {tool.name: tool for tool in wired.tools}
    assert not tools["Remember"].invoke({"text": "tenant fact"}, ctx).is_error
    assert not tools["FocusWrite"].invoke({"focus": "tenant focus"}, ctx).is_error
    written = sorted(p for p in (tmp_path / "tenants").rglob("*") if p.is_file())
    assert written and all(tenant.root in p.parents for p in written)
    assert not (tmp_path / ".specwire").exists()
    assert any("sessions" in p.parts and "sess_0123456789abcdef" in p.parts for p in written)


def test_session_root_outside_the_tenant_is_refused(tmp_path: Path) -> None:
    tenant = build_tenant("tenant-acme", tmp_path / "tenants")
    deps, _, _ = deps_for(tmp_path, tenant=tenant, session_root_dir=tmp_path / "elsewhere")
    with pytest.raises(TenancyError, match="cross-tenant"):
        wire_memory({"spec_name": "svc", "memory": {}}, deps)


def test_append_event_receives_tool_events(tmp_path: Path) -> None:
    seen: list[str] = []
    wired, _, _ = wire(
        tmp_path,
        {"spec_name": "cont", "continuity": CONTINUITY_ON},
        append_event=lambda kind, payload: seen.append(kind),
    )
    tools = {tool.name: tool for tool in wired.tools}
    ctx = ToolContext(session_id="sess_0123456789abcdef", tool_use_id="tu_1")
    result = tools["PlanUpdate"].invoke({"action": "create", "title": "Ship", "steps": ["a"]}, ctx)
    assert not result.is_error, result.text
    assert seen == ["plan_update"]


def test_wire_continuity_is_the_granular_entry_point(tmp_path: Path) -> None:
    deps, catalog, _ = deps_for(tmp_path)
    assert wire_continuity({"spec_name": "x", "memory": {}}, deps) is None
    wired = wire_continuity({"spec_name": "x", "memory": {}, "continuity": CONTINUITY_ON}, deps)
    assert wired is not None and catalog.names() == CONTINUITY


def test_fragment_object_and_mapping_wire_the_same(tmp_path: Path) -> None:
    data = {"spec_name": "same", "memory": {"recall_k": 7}, "continuity": CONTINUITY_ON}
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    a, _, _ = wire(tmp_path / "a", data)
    b, _, _ = wire(tmp_path / "b", MemoryWiringFragment.model_validate(data))
    assert [t.name for t in a.tools] == [t.name for t in b.tools]
    assert a.options["memory"].recall_k == b.options["memory"].recall_k == 7


def test_close_releases_the_fact_store_and_is_idempotent(tmp_path: Path) -> None:
    wired, _, _ = wire(tmp_path, {"spec_name": "facts", "memory": {}})
    assert wired.stores.memory.closed is False
    wired.close()
    wired.close()
    assert wired.stores.memory.closed is True


def test_per_turn_wiring_announces_to_stderr_once_per_process(tmp_path: Path) -> None:
    import subprocess
    import sys

    script = (
        "from pathlib import Path\n"
        "from specwire.runtime.core.tool_types import ToolCatalog\n"
        "from specwire.runtime.wiring import MemoryDeps, wire_memory\n"
        "fragment = {'spec_name': 'bot', 'memory': {},"
        " 'continuity': {'scope': 'session'}}\n"
        "for session in ('sess_000000000000000a', 'sess_000000000000000b'):\n"
        "    deps = MemoryDeps(catalog=ToolCatalog(), cwd=Path.cwd(), session_scope=session)\n"
        "    wire_memory(fragment, deps).close()\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, check=True
    )
    lines = done.stderr.splitlines()
    assert (
        len([line for line in lines if "Remember/Recall/MemoryRead/MemoryForget wired" in line])
        == 1
    )
    assert len([line for line in lines if "continuity on" in line]) == 2  # two session dirs


def test_a_callers_own_log_gets_every_announcement(tmp_path: Path) -> None:
    lines: list[str] = []
    for _ in range(2):
        deps, _, _ = deps_for(tmp_path, log=lines.append)
        wire_memory({"spec_name": "bot", "memory": {}}, deps).close()
    assert len([line for line in lines if "wired" in line]) == 2


def test_a_fragment_newer_than_the_runtime_fails_in_one_line_naming_the_specwire(
    tmp_path: Path,
) -> None:
    from specwire.runtime.core.errors import MemoryServiceError
    from specwire.runtime.core.fragment import FRAGMENT_VERSION

    newer = {
        "spec_name": "future",
        "version": FRAGMENT_VERSION + 1,
        "specwire": "9.0.0",
        "memory": {"some_knob_from_the_future": True},
    }
    with pytest.raises(MemoryServiceError) as refused:
        wire(tmp_path, newer)
    message = str(refused.value)
    assert "\n" not in message
    assert message.startswith("this bundle needs specwire 9.0.0 or newer")
    assert 'pip install "specwire>=9.0.0"' in message
    assert not (tmp_path / ".specwire").exists()


def test_a_fragment_without_a_version_is_a_specwire_0_1_fragment(tmp_path: Path) -> None:
    wired, catalog, _ = wire(tmp_path, {"spec_name": "old", "continuity": CONTINUITY_ON})
    assert catalog.names() == CONTINUITY
