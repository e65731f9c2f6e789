"""``memory.dream`` from the spec: lowered settings, run by a per-turn host after a turn in the
background, at most once per window, never failing the turn."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from specwire.runtime.core.fragment import DreamFragment
from specwire.runtime.core.ids import new_session_id
from specwire.runtime.core.paths import StoreLayout
from specwire.runtime.core.seams import MemorySeam
from specwire.runtime.core.tool_types import ToolCatalog
from specwire.runtime.dream import schedule
from specwire.runtime.dream.schedule import DreamJob, dream_settings, wait_for_dreams
from specwire.runtime.dream.state import state_path
from specwire.runtime.facts.store import FactStore
from specwire.runtime.hosts.turns import run_turn
from specwire.runtime.hosts.types import TurnSetup
from specwire.runtime.models import ScriptedModel
from specwire.runtime.wiring import MemoryDeps, wire_memory

SPEC = "dreamy"


def test_mode_defaults_to_full_as_crewhaus_resolves_it() -> None:
    settings = dream_settings(DreamFragment(every_ms=6 * 3_600_000))
    assert (settings.every_s, settings.mode, settings.budget_usd) == (21_600, "full", None)
    explicit = dream_settings(
        DreamFragment(every_ms=300_000, mode="deterministic", budget_usd=1.0, instructions="x")
    )
    assert explicit.mode == "deterministic"
    assert (explicit.budget_usd, explicit.instructions) == (1.0, "x")


def turn(cwd: Path, dream: dict[str, Any], lines: list[str], message: str = "hello") -> None:
    catalog = ToolCatalog()
    fragment = {"spec_name": SPEC, "memory": {"dream": dream}}
    wired = wire_memory(fragment, MemoryDeps(catalog=catalog, cwd=cwd, log=lines.append))
    seam = wired.options["memory"]
    assert isinstance(seam, MemorySeam) and seam.dream is not None
    run_turn(
        model=ScriptedModel(),
        instructions="i",
        setup=TurnSetup(catalog=catalog, options=wired.options, close=wired.close),
        sessions_dir=StoreLayout.for_cwd(cwd, SPEC).sessions_dir,
        session_id=new_session_id(),
        message=message,
        spec_name=SPEC,
        target="channel",
        info={},
        log=lines.append,
    )


def test_a_turn_starts_the_dream_once_per_window(tmp_path: Path) -> None:
    layout = StoreLayout.for_cwd(tmp_path, SPEC)
    with FactStore.open(layout.facts_db) as store:
        store.remember("the deploy target is kubernetes")
        store.remember("the deploy target is kubernetes.")
    lines: list[str] = []
    turn(tmp_path, {"every_ms": 86_400_000, "budget_usd": 0.5}, lines)
    assert wait_for_dreams(30)
    state = json.loads(state_path(layout).read_text(encoding="utf-8"))
    outcome = state["lastOutcome"]
    assert outcome["mode"] == "full" and outcome["status"] == "ok"
    assert outcome["facts"]["superseded"] == 1
    # Full without a priced model: the model phase is refused and reported, nothing crashes.
    assert "has no price" in outcome["model"]["reason"]
    assert any(line.startswith(f"[dream] {SPEC}: ok (model phase: refused") for line in lines)
    ran_at = state["lastRunAt"]
    turn(tmp_path, {"every_ms": 86_400_000, "budget_usd": 0.5}, lines, "again")
    assert wait_for_dreams(30)
    assert json.loads(state_path(layout).read_text(encoding="utf-8"))["lastRunAt"] == ran_at


def test_full_without_a_budget_is_refused_and_reported(tmp_path: Path) -> None:
    lines: list[str] = []
    turn(tmp_path, {"every_ms": 3_600_000}, lines)
    assert wait_for_dreams(30)
    state = json.loads(state_path(StoreLayout.for_cwd(tmp_path, SPEC)).read_text("utf-8"))
    assert "needs a budget_usd above 0" in state["lastOutcome"]["model"]["reason"]


def test_a_failing_dream_is_logged_and_never_fails_the_turn(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*args: Any, **kwargs: Any) -> None:
        raise OSError("disk on fire")

    monkeypatch.setattr(schedule, "run_dream", broken)
    lines: list[str] = []
    turn(tmp_path, {"every_ms": 3_600_000, "mode": "deterministic"}, lines)
    assert wait_for_dreams(30)
    assert f"[dream] {SPEC}: failed (OSError: disk on fire)\n" in lines


def test_a_job_started_twice_in_a_window_runs_once(tmp_path: Path) -> None:
    lines: list[str] = []
    job = DreamJob(
        StoreLayout.for_cwd(tmp_path, SPEC),
        dream_settings(DreamFragment(every_ms=3_600_000, mode="deterministic")),
        lines.append,
    )
    first = job.start_if_due("scripted")
    assert first is not None
    assert job.start_if_due("scripted") is None
    first.join(30)
    assert job.start_if_due("scripted") is None  # same window, already ran
