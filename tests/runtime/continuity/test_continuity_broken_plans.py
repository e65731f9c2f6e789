"""A plan file a person broke by hand: reported as unreadable everywhere, never overwritten."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from continuity_support import SESSION, Events, Logs, context, make_store

from specwire.runtime.continuity.frontmatter import split_frontmatter
from specwire.runtime.continuity.store import ContinuityStore
from specwire.runtime.continuity.tools import continuity_tools
from specwire.runtime.core.errors import StoreError
from specwire.runtime.core.seams import HandoffInput
from specwire.runtime.core.tool_types import ToolResult
from specwire.runtime.safety.framing import neutralize

PATH = "state/demo/plans/plan-0001-ship.md"
REASON = (
    "front matter is not valid YAML at line 5, column 4: expected ',' or '}', but got '<scalar>'"
)
BROKEN = f"plan-0001 is unreadable: {REASON}; fix {PATH} or move it away"
BROKEN_ACTIVE = f"plan-0001 (active) is unreadable: {REASON}; fix {PATH} or move it away"


class Kit:
    def __init__(self, tmp_path: Path) -> None:
        self.logs = Logs()
        self.store: ContinuityStore = make_store(tmp_path, log=self.logs)
        self.tools = {t.name: t for t in continuity_tools(self.store, "ladder", True)}

    def call(self, name: str, raw: dict[str, Any]) -> ToolResult:
        return self.tools[name].invoke(raw, context(SESSION, Events()))


def _break(store: ContinuityStore, plan_id: str = "plan-0001") -> tuple[Path, bytes]:
    """Break the plan's front matter the way a person editing by hand would (a lost quote)."""
    path = next(store.plans_dir.glob(f"{plan_id}-*.md"))
    text = path.read_text()
    broken = text.replace(f'"id": "{plan_id}",', f'"id": "{plan_id},')
    assert broken != text
    path.write_text(broken)
    return path, path.read_bytes()


@pytest.fixture
def kit(tmp_path: Path) -> Kit:
    kit = Kit(tmp_path)
    kit.call("PlanUpdate", {"action": "create", "title": "Ship", "steps": ["tag"]})
    return kit


def test_plan_read_names_the_file_and_the_problem(kit: Kit) -> None:
    _break(kit.store)
    result = kit.call("PlanRead", {})
    assert not result.is_error
    assert result.text == BROKEN_ACTIVE
    assert kit.call("PlanRead", {"planId": "plan-0001"}).text == BROKEN_ACTIVE


def test_a_broken_active_plan_stays_active_and_nothing_is_overwritten(kit: Kit) -> None:
    path, original = _break(kit.store)
    created = kit.call("PlanUpdate", {"action": "create", "title": "Next"})
    assert created.text == (
        "created plan-0002 — Next (0 step(s)); plan-0001 stays active but is unreadable: "
        f"{REASON}; fix {PATH} or move it away"
    )
    assert kit.store.active_plan_id() == "plan-0001"
    for raw in (
        {"action": "add_step", "text": "x"},
        {"action": "set_step_status", "step": 1, "status": "in_progress"},
        {"action": "set_active", "planId": "plan-0001"},
    ):
        refused = kit.call("PlanUpdate", raw)
        assert refused.is_error and refused.text == BROKEN, raw
    completed = kit.call("PlanComplete", {"step": 1, "evidence": [{"toolUseId": "tu_x"}]})
    assert completed.is_error and completed.text == BROKEN
    assert path.read_bytes() == original
    assert kit.call("PlanRead", {}).text == (
        f"{BROKEN_ACTIVE}\n\nother plans:\n- plan-0002 — Next (0/0 steps proven)"
    )
    # Switching away is an explicit choice, and it works.
    assert kit.call("PlanUpdate", {"action": "set_active", "planId": "plan-0002"}).text == (
        "active plan → plan-0002 — Next (0/0 steps proven)"
    )
    assert kit.call("PlanRead", {}).text == (
        f"plan-0002 — Next (0/0 steps proven) — active\n_no steps yet_\n\nother plans:\n- {BROKEN}"
    )
    assert path.read_bytes() == original


def test_ids_count_a_broken_file(kit: Kit) -> None:
    kit.call("PlanUpdate", {"action": "create", "title": "Two"})
    path, original = _break(kit.store, "plan-0002")
    assert kit.store.create_plan("three")[0].id == "plan-0003"
    assert path.read_bytes() == original


def test_focus_read_tail_and_handoff_report_the_broken_active_plan(kit: Kit) -> None:
    _break(kit.store)
    kit.store.create_plan("Next", ["go"])
    focus = kit.call("FocusRead", {})
    assert not focus.is_error
    assert focus.text == f"focus: (no focus set)\nactive plan: {BROKEN}"
    assert kit.store.render_plan_tail() == BROKEN_ACTIVE
    assert kit.store.render_continuity_tail() == (
        f"<current_plan>\n{neutralize(BROKEN_ACTIVE)}\n</current_plan>"
    )
    handoff = kit.store.write_handoff(HandoffInput(SESSION, "exit")).read_text()
    assert f"## Active plan\n{BROKEN}\n" in handoff
    assert "## Other open plans\n- plan-0002 — Next (0/1 steps proven)\n" in handoff
    assert "## Next actions\n_none_\n" in handoff


def test_a_broken_plan_that_is_not_active_is_listed_and_named_in_the_handoff(kit: Kit) -> None:
    kit.call("PlanUpdate", {"action": "create", "title": "Two"})
    _break(kit.store, "plan-0002")
    reason = REASON
    path = "state/demo/plans/plan-0002-two.md"
    line = f"plan-0002 is unreadable: {reason}; fix {path} or move it away"
    assert kit.call("PlanRead", {}).text == (
        f"plan-0001 — Ship (0/1 steps proven) — active\n1. [open] tag\n\nother plans:\n- {line}"
    )
    assert kit.store.render_plan_tail() == "plan-0001 — Ship\n1. [open] tag"
    handoff = kit.store.write_handoff(HandoffInput(SESSION, "exit")).read_text()
    assert f"## Unreadable plans\n- {line}\n" in handoff


def test_only_broken_plans_is_not_no_plans_yet(tmp_path: Path) -> None:
    kit = Kit(tmp_path)
    kit.store.create_plan("Ship")
    (kit.store.plans_dir / "ACTIVE").unlink()
    _break(kit.store)
    assert kit.call("PlanRead", {}).text == (
        "no active plan — pass planId, or create a plan first with PlanUpdate "
        f"{{action: 'create'}}.\n\nother plans:\n- {BROKEN}"
    )


def test_get_plan_refuses_with_the_reason(kit: Kit) -> None:
    _break(kit.store)
    with pytest.raises(StoreError) as refused:
        kit.store.get_plan("plan-0001")
    assert str(refused.value) == BROKEN
    assert [u.id for u in kit.store.unreadable_plans()] == ["plan-0001"]
    assert kit.store.list_plans() == []


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("no front matter\n", "no front matter (the file must start with a --- line)"),
        ("---\n{}\n", "the front matter has no closing --- line"),
        ("---\n[1]\n---\n", "front matter is not a mapping of key: value lines (line 2)"),
        (
            '---\n{\n  "a": 1\n  "b": 2\n}\n---\n',
            "front matter is not valid YAML at line 4, column 6",
        ),
        ("---\nid: plan-0001\ntitle: [open\n---\n", "front matter is not valid YAML at line 3"),
    ],
)
def test_front_matter_reasons(text: str, reason: str) -> None:
    with pytest.raises(ValueError) as failed:
        split_frontmatter(text)
    assert str(failed.value).startswith(reason)


def test_a_plan_file_that_is_not_utf8_is_unreadable(tmp_path: Path) -> None:
    store = make_store(tmp_path)
    store.create_plan("Ship")
    path = store.plans_dir / "plan-0001-ship.md"
    path.write_bytes(b"\xff\xfe---\n")
    with pytest.raises(StoreError, match=r"plan-0001 is unreadable: not UTF-8 text; fix "):
        store.get_plan("plan-0001")
    assert store.create_plan("two")[0].id == "plan-0002"
