"""Plans: file format, ids, slugs, the active plan, steps; goals: CRUD and file shape."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from continuity_support import Clock, make_store

from specwire.runtime.continuity.goals import parse_goals
from specwire.runtime.continuity.plans import parse_plan, slugify
from specwire.runtime.continuity.store import NO_ACTIVE_PLAN
from specwire.runtime.core.errors import StoreError


def test_plan_file_golden(tmp_path: Path) -> None:
    store = make_store(tmp_path)
    plan, active = store.create_plan("  Ship the\n release! ", ["tag it", "  write\tnotes "])
    assert active and plan.id == "plan-0001" and plan.slug == "ship-the-release"
    path = store.plans_dir / "plan-0001-ship-the-release.md"
    assert path.read_text() == (
        "---\n"
        "{\n"
        '  "createdAt": "2026-03-01T09:30:00.000Z",\n'
        '  "id": "plan-0001",\n'
        '  "slug": "ship-the-release",\n'
        '  "title": "Ship the release!",\n'
        '  "updatedAt": "2026-03-01T09:30:00.000Z"\n'
        "}\n"
        "---\n"
        "\n"
        "# Ship the release!\n"
        "\n"
        "## Steps\n"
        "\n"
        "1. [open] tag it\n"
        "2. [open] write notes\n"
    )
    assert path.stat().st_mode & 0o777 == 0o600
    assert (store.plans_dir / "ACTIVE").read_text() == "plan-0001\n"


def test_a_plan_without_steps_says_so(tmp_path: Path) -> None:
    store = make_store(tmp_path)
    store.create_plan("Empty")
    assert (
        (store.plans_dir / "plan-0001-empty.md")
        .read_text()
        .endswith("## Steps\n\n_no steps yet_\n")
    )


@pytest.mark.parametrize(
    ("title", "slug"),
    [
        ("Hello, World", "hello-world"),
        ("--Already--dashed--", "already-dashed"),
        ("日本語", "plan"),
        ("", "plan"),
        ("a" * 39 + " b" + "c" * 10, "a" * 39),
        ("x" * 50, "x" * 40),
    ],
)
def test_slug_rules(title: str, slug: str) -> None:
    assert slugify(title) == slug


def test_ids_are_max_plus_one_and_only_the_first_plan_becomes_active(tmp_path: Path) -> None:
    store = make_store(tmp_path)
    store.create_plan("one")
    second, active = store.create_plan("two")
    assert (second.id, active) == ("plan-0002", False)
    (store.plans_dir / "plan-0041-by-hand.md").write_text(
        (store.plans_dir / "plan-0001-one.md").read_text()
    )
    third, _ = store.create_plan("three")
    assert third.id == "plan-0042"
    assert store.active_plan_id() == "plan-0001"
    assert [p.id for p in store.list_plans()] == [
        "plan-0001",
        "plan-0002",
        "plan-0041",
        "plan-0042",
    ]


def test_set_active_and_the_focus_mirror(tmp_path: Path) -> None:
    store = make_store(tmp_path)
    store.write_focus("working")
    store.create_plan("one")
    store.create_plan("two")
    store.set_active("plan-0002")
    assert store.active_plan_id() == "plan-0002"
    assert "<!-- specwire:active-plan -->\nplan-0002\n" in store.focus_path.read_text()
    with pytest.raises(StoreError, match=r"unknown plan plan-0009 \(plans: plan-0001, plan-0002\)"):
        store.set_active("plan-0009")


def test_a_dangling_active_pointer_counts_as_no_active_plan(tmp_path: Path) -> None:
    store = make_store(tmp_path)
    store.create_plan("one")
    (store.plans_dir / "ACTIVE").write_text("plan-0007\n")
    assert store.active_plan_id() is None
    with pytest.raises(StoreError) as refused:
        store.add_step(None, "x")
    assert str(refused.value) == NO_ACTIVE_PLAN
    plan, active = store.create_plan("two")
    assert active and store.active_plan_id() == plan.id


def test_steps_and_statuses(tmp_path: Path) -> None:
    clock = Clock()
    store = make_store(tmp_path, clock=clock)
    store.create_plan("p", ["a"])
    clock.advance(5)
    plan, number = store.add_step(None, "b\nc")
    assert number == 2 and plan.steps[1].text == "b c"
    store.set_step_status("plan-0001", 2, "in_progress")
    store.set_step_status(None, 1, "claimed")
    plan = store.get_plan("plan-0001")
    assert [s.status for s in plan.steps] == ["claimed", "in_progress"]
    assert plan.updated_at == "2026-03-01T09:30:05.000Z"
    assert plan.created_at == "2026-03-01T09:30:00.000Z"
    with pytest.raises(StoreError, match="has no step 3"):
        store.set_step_status(None, 3, "open")


def test_a_person_can_edit_a_plan_file(tmp_path: Path) -> None:
    store = make_store(tmp_path)
    store.create_plan("p", ["a", "b"])
    path = store.plans_dir / "plan-0001-p.md"
    text = path.read_text().replace("2. [open] b", "2. [in_progress] b, edited")
    path.write_text(text + "\n## Notes\n\nkeep me\n")
    store.add_step(None, "c")
    plan = store.get_plan("plan-0001")
    assert [(s.text, s.status) for s in plan.steps] == [
        ("a", "open"),
        ("b, edited", "in_progress"),
        ("c", "open"),
    ]
    assert path.read_text().endswith("3. [open] c\n\n## Notes\n\nkeep me\n")


def test_an_unreadable_plan_is_skipped_with_a_log_line(tmp_path: Path) -> None:
    from continuity_support import Logs

    logs = Logs()
    store = make_store(tmp_path, log=logs)
    store.create_plan("good")
    (store.plans_dir / "plan-0002-broken.md").write_text("no frontmatter here\n")
    assert [p.id for p in store.list_plans()] == ["plan-0001"]
    assert any("plan-0002-broken.md" in line for line in logs.lines)
    assert store.create_plan("next")[0].id == "plan-0003"  # ids never reuse a file's number


def test_parse_plan_rejects_non_plans() -> None:
    with pytest.raises(ValueError):
        parse_plan("---\n[1, 2]\n---\n")


# ── goals ────────────────────────────────────────────────────────────────────────────────────


def test_goals_crud_and_file_shape(tmp_path: Path) -> None:
    clock = Clock()
    store = make_store(tmp_path, clock=clock)
    first = store.write_goal("Ten paying users", target=10, unit="users")
    second = store.write_goal("Docs")
    assert (first.id, second.id) == ("goal-0001", "goal-0002")
    clock.advance(1)
    change = store.update_goal("goal-0001", current=3, status="in_progress", title="10 users")
    assert change.goal.current == 3 and change.goal.title == "10 users"
    data = json.loads(store.goals_path.read_text())
    assert data == {
        "version": 1,
        "goals": [
            {
                "id": "goal-0001",
                "title": "10 users",
                "status": "in_progress",
                "target": 10,
                "current": 3,
                "unit": "users",
                "createdAt": "2026-03-01T09:30:00.000Z",
                "updatedAt": "2026-03-01T09:30:01.000Z",
            },
            {
                "id": "goal-0002",
                "title": "Docs",
                "status": "open",
                "createdAt": "2026-03-01T09:30:00.000Z",
                "updatedAt": "2026-03-01T09:30:00.000Z",
            },
        ],
    }
    assert store.goals_path.read_text().startswith('{\n  "goals": [\n')
    assert [g.id for g in store.list_goals()] == ["goal-0001", "goal-0002"]
    assert parse_goals(store.goals_path.read_text()) == store.list_goals()
    with pytest.raises(StoreError, match="unknown goal goal-0009"):
        store.update_goal("goal-0009", current=1)


def test_a_hand_written_block_yaml_goals_file_works_with_every_goal_tool(tmp_path: Path) -> None:
    store = make_store(tmp_path)
    store.goals_path.parent.mkdir(parents=True)
    store.goals_path.write_text(
        "# goals, edited by hand\n"
        "version: 1\n"
        "goals:\n"
        "  - id: goal-0001\n"
        "    title: >\n"
        "      Cut p95 latency\n"
        "      below 200 ms\n"
        "    status: open\n"
        "    target: 200\n"
        "    current: 340\n"
        "    unit: ms\n"
        "    createdAt: 2026-03-01T09:00:00Z\n"
    )
    [goal] = store.list_goals()
    assert (goal.id, goal.title, goal.target, goal.current) == (
        "goal-0001",
        "Cut p95 latency below 200 ms",
        200,
        340,
    )
    assert store.get_goal("goal-0001").unit == "ms"
    store.write_goal("Ship the beta")
    store.update_goal("goal-0001", current=250)
    assert [(g.id, g.current) for g in store.list_goals()] == [
        ("goal-0001", 250),
        ("goal-0002", None),
    ]
    assert json.loads(store.goals_path.read_text())["version"] == 1  # written back as JSON


def test_a_broken_goals_file_is_named_with_its_line_and_never_clobbered(tmp_path: Path) -> None:
    store = make_store(tmp_path)
    store.goals_path.parent.mkdir(parents=True)
    broken = "version: 1\ngoals:\n  - id: goal-0001\n    title: [unclosed\n"
    store.goals_path.write_text(broken)
    with pytest.raises(StoreError, match=r"goals.yaml is not valid YAML at line 5"):
        store.write_goal("x")
    assert store.goals_path.read_text() == broken


def test_a_goal_entry_with_a_wrong_key_is_named_with_its_line(tmp_path: Path) -> None:
    """A typo (`name:` for `title:`) used to make the whole file read as "no goals yet"."""
    store = make_store(tmp_path)
    store.goals_path.parent.mkdir(parents=True)
    edited = (
        "version: 1\n"
        "goals:\n"
        "  - id: goal-0001\n"
        "    title: Cut p95 latency\n"
        "  - id: goal-0002\n"
        "    name: Ship the beta\n"
    )
    store.goals_path.write_text(edited)
    with pytest.raises(
        StoreError,
        match=r"goals.yaml line 5: goal entry 2: goal-0002 has no `title` text; "
        r"unknown key\(s\): name — fix it by hand",
    ):
        store.write_goal("x")
    assert store.goals_path.read_text() == edited
    store.goals_path.write_text("version: 1\ngoals:\n  - {title: Ship it}\n")
    with pytest.raises(StoreError, match=r"line 3: goal entry 1: its `id` is not a goal id"):
        store.list_goals()


def test_a_goal_entry_with_a_wrong_status_is_named_and_never_rewritten(tmp_path: Path) -> None:
    """A typo in a status used to read as "open", and the next write stored "open" over it."""
    store = make_store(tmp_path)
    store.goals_path.parent.mkdir(parents=True)
    edited = (
        "version: 1\ngoals:\n  - id: goal-0001\n    title: Cut p95 latency\n    status: finished\n"
    )
    store.goals_path.write_text(edited)
    with pytest.raises(
        StoreError,
        match=r"goals.yaml line 3: goal entry 1: goal-0001's `status` is not one of open, "
        r"in_progress, claimed, proven, done \(got 'finished'\) — fix it by hand",
    ):
        store.write_goal("x")
    assert store.goals_path.read_text() == edited
    store.goals_path.write_text(edited.replace("finished", "done"))
    [goal] = store.list_goals()
    assert goal.status == "done"


def test_a_hand_written_block_yaml_plan_works_with_the_plan_tools(tmp_path: Path) -> None:
    store = make_store(tmp_path)
    store.plans_dir.mkdir(parents=True)
    (store.plans_dir / "plan-0001-ship.md").write_text(
        "---\n"
        "id: plan-0001\n"
        "slug: ship\n"
        "title: 'Ship it: the release'\n"
        "createdAt: 2026-03-01T09:00:00Z\n"
        "---\n\n# Ship it: the release\n\n## Steps\n\n1. [open] tag\n2. [open] notes\n"
    )
    [plan] = store.list_plans()
    assert (plan.id, plan.title, [s.text for s in plan.steps]) == (
        "plan-0001",
        "Ship it: the release",
        ["tag", "notes"],
    )
    store.set_active("plan-0001")
    store.set_step_status("plan-0001", 1, "in_progress")
    assert store.get_plan("plan-0001").steps[0].status == "in_progress"
    assert store.create_plan("Next")[0].id == "plan-0002"
