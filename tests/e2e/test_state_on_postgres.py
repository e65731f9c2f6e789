"""A cli bundle with ``memory.backend: postgres`` (state follows the facts there) run from two
empty working folders: the second continues the first's plan and goal, and neither folder gets
a continuity, wiki or session log file."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from serving_support import build_bundle, clean_env

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "conformance"))
from conformance_harness import PostgresServerForTests  # noqa: E402

pytestmark = [pytest.mark.e2e, pytest.mark.postgres]

SPEC = """\
name: pg-planner
target: cli
agent:
  model: scripted
  instructions: You plan the platform team's releases.
tools: [read, ls]
memory:
  backend: postgres
  dsn: $DATABASE_URL
  wiki: {}
"""


def run(agent: Path, workdir: Path, env: dict[str, str], *messages: str) -> Any:
    workdir.mkdir(parents=True, exist_ok=True)
    argv = [sys.executable, str(agent)]
    for message in messages:
        argv += ["--message", message]
    return subprocess.run(
        argv,
        cwd=workdir,
        capture_output=True,
        text=True,
        env={**env, "SPECWIRE_MODEL": "scripted", "HOME": str(workdir)},
        check=False,
        stdin=subprocess.DEVNULL,
        timeout=120,
    )


def tool_results(database: str, ran: Any, name: str) -> list[str]:
    """The results of ``name`` in the session a run logged (in the database: its id is on
    stderr)."""
    from specwire.runtime.facts.providers.connect import DEFAULT_TENANT
    from specwire.runtime.pg.pool import open_pool
    from specwire.runtime.sessions.postgres import PostgresSessionLogs

    [session] = re.findall(r"session log: (sess_\w+) \(in the database\)", ran.stderr)
    pool = open_pool(database)
    try:
        logs = PostgresSessionLogs(pool, tenant=DEFAULT_TENANT, spec="pg-planner")
        return [
            str(event.payload["text"])
            for event in logs.events(session)
            if event.type == "tool_result" and event.payload["name"] == name
        ]
    finally:
        pool.close()


def state_files(workdir: Path) -> list[str]:
    """Continuity, wiki and trash files a file-backed bundle would have written."""
    root = workdir / ".specwire"
    names = ("state", "wiki", "trash", "retention.json", "sessions")
    return sorted(str(p.relative_to(root)) for n in names for p in root.glob(n))


def test_two_folders_continue_one_plan_and_goal_and_write_no_state_file(tmp_path: Path) -> None:
    database = PostgresServerForTests.fresh_database()
    try:
        spec = tmp_path / "pg-planner.yaml"
        spec.write_text(SPEC, encoding="utf-8")
        agent = build_bundle(spec, tmp_path / "out")
        env = clean_env(DATABASE_URL=database)
        first = run(
            agent,
            tmp_path / "one",
            env,
            "plan: Release 2.0: cut the branch; run the suite",
            'call GoalWrite {"title": "Ship 2.0 to every region", "target": 3}',
        )
        assert first.returncode == 0, first.stderr
        second = run(
            agent,
            tmp_path / "two",
            env,
            "claim 1",
            'call GoalUpdate {"goalId": "goal-0001", "current": 1}',
            "call GoalList {}",
        )
        assert second.returncode == 0, second.stderr
        [claimed] = tool_results(database, second, "PlanUpdate")
        assert "Release 2.0" in claimed or "claimed" in claimed, claimed
        [goals] = tool_results(database, second, "GoalList")
        assert "Ship 2.0 to every region" in goals and "1" in goals
        third = run(agent, tmp_path / "one", env, "call PlanRead {}")
        assert third.returncode == 0, third.stderr
        [plan] = tool_results(database, third, "PlanRead")
        assert "Release 2.0" in plan and "claimed" in plan, plan
        assert state_files(tmp_path / "one") == [] and state_files(tmp_path / "two") == []
        assert database not in first.stderr + second.stderr + third.stderr
    finally:
        PostgresServerForTests.drop_database(database)
