"""``memory.tiers``: wire_memory registers the tier tools and the prompt carries the memory
blocks, through a real agent loop, a real SQLite store and a scripted model."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from specwire.runtime.core.fragment import TIER_TOOL_NAMES
from specwire.runtime.core.ids import new_session_id
from specwire.runtime.core.scopes import Audience
from specwire.runtime.core.seams import MemorySeam
from specwire.runtime.core.tool_types import ToolCatalog
from specwire.runtime.loop import run_chat_loop
from specwire.runtime.models import ReplayModel
from specwire.runtime.sessions.log import SessionLog, read_events
from specwire.runtime.wiring import MemoryDeps, wire_memory

SPEC = "tiers-spec"
DM_ANA = Audience(user="U_ANA", conversation="D_ANA", private=True)
DM_BO = Audience(user="U_BO", conversation="D_BO", private=True)


def now() -> datetime:
    return datetime(2026, 5, 21, 9, 30, tzinfo=UTC)


def fragment(**memory: Any) -> dict[str, Any]:
    return {"spec_name": SPEC, "memory": {"tiers": True, **memory}}


def session(
    tmp_path: Path,
    responses: list[dict[str, Any]],
    *,
    audience: Audience | None = None,
    **memory: Any,
) -> dict[str, str]:
    """Run one session; the system blocks its first model call saw, by kind."""
    catalog = ToolCatalog()
    deps = MemoryDeps(
        catalog=catalog, cwd=tmp_path, log=lambda line: None, now=now, audience=audience
    )
    wired = wire_memory(fragment(**memory), deps)
    script = tmp_path / f"script-{new_session_id()}.json"
    script.write_text(json.dumps(responses), encoding="utf-8")
    log = SessionLog(tmp_path / "sessions", new_session_id())
    try:
        run_chat_loop(
            model=ReplayModel(script),
            instructions="You are a helpful assistant.",
            catalog=catalog,
            session_log=log,
            inputs=["hello"],
            output=lambda text: None,
            log=lambda line: None,
            **wired.options,
        )
    finally:
        wired.close()
    contexts = [event.payload for event in read_events(log.path) if event.type == "context"]
    return {block["kind"]: block["text"] for block in contexts[0]["blocks"]}


def write_call(content: str) -> dict[str, Any]:
    call = {
        "name": "memory_write",
        "input": {"tier": "AGENT", "content": content, "mode": "append"},
    }
    return {"tool_calls": [call]}


def test_tiers_on_registers_the_four_tools_after_the_fact_tools(tmp_path: Path) -> None:
    catalog = ToolCatalog()
    deps = MemoryDeps(catalog=catalog, cwd=tmp_path, log=lambda line: None, now=now)
    wired = wire_memory(fragment(), deps)
    try:
        assert catalog.names() == [
            "Remember",
            "Recall",
            "MemoryRead",
            "MemoryForget",
            *TIER_TOOL_NAMES,
        ]
        seam = wired.options["memory"]
        assert isinstance(seam, MemorySeam) and seam.memory_blocks is not None
    finally:
        wired.close()


def test_tiers_off_wires_nothing_of_them(tmp_path: Path) -> None:
    catalog = ToolCatalog()
    deps = MemoryDeps(catalog=catalog, cwd=tmp_path, log=lambda line: None, now=now)
    wired = wire_memory({"spec_name": SPEC, "memory": {}}, deps)
    try:
        assert not set(TIER_TOOL_NAMES) & set(catalog.names())
        assert wired.options["memory"].memory_blocks is None
    finally:
        wired.close()


def test_a_note_written_in_one_session_is_in_the_next_sessions_prompt(tmp_path: Path) -> None:
    first = session(tmp_path, [write_call("- the user is called Ana"), {"text": "noted"}])
    assert "agent_memory" not in first  # nothing was written yet when the session began
    second = session(tmp_path, [{"text": "hi Ana"}])
    block = second["agent_memory"]
    assert block.startswith("[AGENT MEMORY]") and block.endswith("[END AGENT MEMORY]")
    assert "## AGENT.md\n- the user is called Ana" in block
    assert "crew_memory" not in second


def test_notes_follow_the_audience(tmp_path: Path) -> None:
    scope = {"scope": {"default": "user"}}
    session(
        tmp_path,
        [write_call("- Ana is allergic to peanuts"), {"text": "ok"}],
        audience=DM_ANA,
        **scope,
    )
    ana = session(tmp_path, [{"text": "hi"}], audience=DM_ANA, **scope)
    bo = session(tmp_path, [{"text": "hi"}], audience=DM_BO, **scope)
    assert "peanuts" in ana["agent_memory"]
    assert "agent_memory" not in bo


def test_a_crew_role_gets_the_crew_block(tmp_path: Path) -> None:
    writer = Audience(role="writer", crew=True)
    checker = Audience(role="checker", crew=True)
    crew_write = {
        "tool_calls": [
            {
                "name": "memory_write",
                "input": {"tier": "CREW", "content": "- ship on friday", "mode": "replace"},
            }
        ]
    }
    scope = {"scope": {"default": "role"}}
    session(
        tmp_path,
        [crew_write, write_call("- my draft is rough"), {"text": "ok"}],
        audience=writer,
        **scope,
    )
    seen = session(tmp_path, [{"text": "ok"}], audience=checker, **scope)
    assert "- ship on friday" in seen["crew_memory"]
    assert seen["crew_memory"].startswith("[CREW SHARED MEMORY]")
    assert "agent_memory" not in seen  # the writer's AGENT.md is the writer role's own
