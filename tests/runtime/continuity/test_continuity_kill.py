"""kill -9 during continuity writes: the next process works at once and finds no leftovers.

Writers are real processes forked from one "zygote" process that imported the store once (so 40
kills cost a fraction of a second each, not an interpreter start each). Each writer loops over
focus, plan, goal and handoff writes through the real store and is SIGKILLed at a random
moment: holding the lock, between a temporary file and its rename, or between two writes.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from continuity_support import SESSION, Logs, context, make_store, record_tool_call

from specwire.runtime.continuity.focus import parse_focus
from specwire.runtime.continuity.plans import parse_plan
from specwire.runtime.continuity.store import ContinuityStore
from specwire.runtime.continuity.tools import continuity_tools
from specwire.runtime.core.paths import StoreLayout

KILLS = 40

ZYGOTE = """
import os, random, sys, traceback
from pathlib import Path
from specwire.runtime.continuity.store import ContinuityStore
from specwire.runtime.core.errors import StoreError
from specwire.runtime.core.paths import StoreLayout
from specwire.runtime.core.seams import HandoffInput

root = Path(sys.argv[1])


def write_forever(seed):
    rng = random.Random(seed)
    store = ContinuityStore(StoreLayout(root, "demo"), lock_wait_s=30)
    n = 0
    while True:
        n += 1
        action = rng.randrange(5)
        if action == 0:
            store.write_focus(f"focus {seed}.{n}")
        elif action == 1:
            store.create_plan(f"plan {seed} {n}", ["reproduce", "patch"])
        elif action == 2:
            try:
                store.add_step(None, f"step {seed}.{n}")
            except StoreError:
                store.create_plan(f"plan {seed} {n}", ["first"])
        elif action == 3:
            store.write_goal(f"goal {seed}.{n}")
        else:
            store.write_handoff(HandoffInput(f"sess_{seed:016x}", "complete"))


for line in sys.stdin:
    seed = int(line)
    pid = os.fork()
    if pid == 0:
        try:
            write_forever(seed)
        except BaseException:
            traceback.print_exc()
        os._exit(1)
    print(pid, flush=True)
    _, status = os.waitpid(pid, 0)
    print(status, flush=True)
"""


def _kill_writers(root: Path, kills: int, seed: int) -> None:
    zygote = subprocess.Popen(
        [sys.executable, "-c", ZYGOTE, str(root)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert zygote.stdin is not None and zygote.stdout is not None
    rng = random.Random(seed)
    try:
        for n in range(kills):
            zygote.stdin.write(f"{n}\n")
            zygote.stdin.flush()
            pid = int(zygote.stdout.readline())
            time.sleep(rng.uniform(0.0, 0.04))
            os.kill(pid, signal.SIGKILL)
            status = int(zygote.stdout.readline())
            # Killed by us, never stopped by an error of its own.
            assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL, n
    finally:
        zygote.stdin.close()
        assert zygote.wait(timeout=30) == 0


def _temps(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob(".*.tmp"))


def test_forty_kills_leave_a_store_that_works_at_once(tmp_path: Path) -> None:
    root = (tmp_path / ".specwire").resolve()
    _kill_writers(root, KILLS, seed=5)
    scope = root / "state" / "demo"
    leftovers = _temps(root)

    logs = Logs()
    store = make_store(tmp_path, log=logs, lock_wait_s=0)  # the next open; a lock must be free
    assert _temps(root) == []
    if leftovers:
        assert any("removed" in line and "interrupted write" in line for line in logs.lines)

    # Every file is whole: the old bytes or the new, never a torn write. (A loaded machine may
    # run the writers so slowly that some file was never written at all.)
    if (scope / "focus.md").exists():
        assert parse_focus((scope / "focus.md").read_text(encoding="utf-8")) is not None
    for plan_file in sorted((scope / "plans").glob("plan-*.md")):
        parse_plan(plan_file.read_text(encoding="utf-8"))
    assert store.unreadable_plans() == []
    store.list_goals()

    # Every continuity tool works now, with no wait for any lock.
    record_tool_call(store.sessions_dir, SESSION, "tu_proof")
    tools = {tool.name: tool for tool in continuity_tools(store, "ladder", True)}
    calls: list[tuple[str, Any]] = [
        ("FocusRead", {}),
        ("FocusWrite", {"focus": "after the kills"}),
        ("PlanUpdate", {"action": "create", "title": "After", "steps": ["check"]}),
        ("PlanUpdate", lambda: {"action": "set_active", "planId": _newest_plan(store)}),
        ("PlanRead", {}),
        ("PlanComplete", {"step": 1, "evidence": [{"toolUseId": "tu_proof"}]}),
        ("GoalWrite", {"title": "survive kill -9"}),
        ("GoalUpdate", {"goalId": "goal-0001", "status": "in_progress"}),
        ("GoalList", {}),
        ("MemoryClear", {"scope": "all", "justification": "start over after the test"}),
    ]
    for name, raw in calls:
        result = tools[name].invoke(raw() if callable(raw) else raw, context())
        assert not result.is_error, (name, result.text)
    assert not (scope / ".lock").exists()


def _newest_plan(store: ContinuityStore) -> str:
    return max(plan.id for plan in store.list_plans())


def test_a_killed_writers_temporaries_are_removed_on_the_next_open(tmp_path: Path) -> None:
    root = (tmp_path / ".specwire").resolve()
    scope = root / "state" / "demo"
    (scope / "plans").mkdir(parents=True)
    stale = [
        scope / ".focus.md.k1ll3d_x.tmp",  # the shape tempfile.mkstemp gave earlier versions
        scope / ".handoff.md.0123abcd.tmp",
        scope / ".goals.yaml.89abcdef.tmp",
        scope / "plans" / ".plan-0001-fix.md.deadbeef.tmp",
        scope / "plans" / ".ACTIVE.00000000.tmp",
        root / ".retention.json.feedf00d.tmp",
    ]
    kept = [
        scope / ".notes.md.0123abcd.tmp",  # not a name the store writes
        scope / ".focus.md.tmp",  # not the temporary's shape
        scope / "focus.md",
    ]
    for path in [*stale, *kept]:
        path.write_text("half a write", encoding="utf-8")
    logs = Logs()
    ContinuityStore(StoreLayout(root, "demo"), log=logs)
    assert [p for p in stale if p.exists()] == []
    assert [p for p in kept if not p.exists()] == []
    assert "removed 6 temporary file(s) an interrupted write left" in "".join(logs.lines)
    assert not (scope / ".lock").exists()


def test_temporaries_are_left_alone_while_a_writer_holds_the_lock(tmp_path: Path) -> None:
    store = make_store(tmp_path)
    store.write_focus("first")
    temp = store.scope_dir / ".focus.md.0123abcd.tmp"
    temp.write_text("a live writer's temporary", encoding="utf-8")
    with store._mutation():  # another writer at work (a separate lock descriptor)
        make_store(tmp_path)
        assert temp.exists()
    make_store(tmp_path)
    assert not temp.exists()


def test_opening_a_store_that_was_never_written_creates_nothing(tmp_path: Path) -> None:
    make_store(tmp_path)
    assert not (tmp_path / ".specwire").exists()


def test_the_sweep_never_reaches_through_a_link_out_of_the_root(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / ".ACTIVE.0123abcd.tmp").write_text("not ours to remove", encoding="utf-8")
    scope = tmp_path / ".specwire" / "state" / "demo"
    scope.mkdir(parents=True)
    (scope / "plans").symlink_to(outside, target_is_directory=True)
    logs = Logs()
    make_store(tmp_path, log=logs)  # opens all the same; the tools report the link when used
    assert (outside / ".ACTIVE.0123abcd.tmp").exists()
    assert "could not check for leftover temporary files" in "".join(logs.lines)
