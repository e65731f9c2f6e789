"""Issue 24's acceptance: workers that share nothing but PostgreSQL.

Three ``agent.py serve`` processes of one managed spec with ``memory.state: postgres`` run in
separate, empty working folders on one PostgreSQL (pgserver). Sixty turns across three tenants
and six conversations go, each to a random worker, every conversation hopping between workers;
one worker is killed with SIGKILL mid-run and the other two go on. Each conversation makes a
plan, sets a goal and moves it on, and remembers notes. Afterwards: every fact is there once
(the killed turn's at most once), every plan and goal change was applied in order, every session
log's seq runs 1..n with every seal valid, the budgeted tenant stopped within one turn of its
budget, and no worker wrote a file in its folder.
"""

from __future__ import annotations

import random
import re
import sys
import threading
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import openai
import pytest
from serving_support import Served, build_bundle, clean_env, rows, served

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "conformance"))
from conformance_harness import PostgresServerForTests  # noqa: E402

pytestmark = [pytest.mark.e2e, pytest.mark.postgres]

SPEC = "stateless"
TENANTS = ("tenant-a", "tenant-b", "tenant-c")
KEYS = {tenant: f"sk-{tenant}-0123456789abcdef0123" for tenant in TENANTS}
BUDGETED = "tenant-c"
CONVERSATIONS = 6  # two per tenant
TURNS = 60
KILL_AFTER = 24  # answered turns before one worker is killed
# A turn of this spec costs about 6,500 input tokens (instructions, tool schemas, the note):
# the budgeted tenant runs out after a few of its twenty turns.
BUDGET = 20_000
SPEC_YAML = f"""\
name: {SPEC}
target: managed
agent:
  model: scripted
  instructions: You keep notes for each tenant's staff.
tools: [read, ls]
tenants:
  - id: tenant-a
  - id: tenant-b
  - id: {BUDGETED}
    budget:
      maxInputTokens: BUDGET
memory:
  backend: postgres
  dsn: $DATABASE_URL
  embedder: hash/256
"""


def directive(index: int, turn: int, goal: str | None) -> str:
    """A conversation's turns: the tenant's plan (its first conversation) or a note, its own
    goal, then notes and the goal moved on in turn. A tenant's continuity is shared by its
    conversations (scope ``spec``); ``goal`` is the id the goal got."""
    name = f"conv-{index}"
    if turn == 0 and index < len(TENANTS):
        return f"plan: Rollout {name}: prepare; ship; verify"
    if turn == 1 or (turn % 2 and goal is None):  # again when the first one was lost
        return f'call GoalWrite {{"title": "{name} milestones", "target": 20}}'
    if turn % 2 and goal is not None:
        return f'call GoalUpdate {{"goalId": "{goal}", "current": {turn}}}'
    return f"remember: note {name} turn {turn}"


def say(server: Served, tenant: str, conversation: str, text: str) -> str:
    client = openai.OpenAI(
        base_url=f"{server.url}/v1",
        api_key=KEYS[tenant],
        max_retries=0,
        timeout=120,
        default_headers={"X-Session-Id": conversation},
    )
    completion = client.chat.completions.create(
        model=SPEC, messages=[{"role": "user", "content": text}], user=f"{tenant}-staff"
    )
    return completion.choices[0].message.content or ""


def is_note(index: int, turn: int) -> bool:
    return (turn == 0 and index >= len(TENANTS)) or (turn >= 2 and turn % 2 == 0)


@pytest.fixture
def database() -> Any:
    uri = PostgresServerForTests.fresh_database()
    yield uri
    PostgresServerForTests.drop_database(uri)


def test_three_workers_share_nothing_but_postgres_and_lose_only_the_killed_turn(
    tmp_path: Path, database: str
) -> None:
    spec = tmp_path / "stateless.yaml"
    spec.write_text(SPEC_YAML.replace("BUDGET", str(BUDGET)), encoding="utf-8")
    agent = build_bundle(spec, tmp_path / "out")
    env = clean_env(
        DATABASE_URL=database,
        **{f"SPECWIRE_TENANT_KEY_{t.upper().replace('-', '_')}": k for t, k in KEYS.items()},
    )
    folders = [tmp_path / f"worker-{n}" for n in range(3)]
    chooser = random.Random(24)
    answered: list[tuple[str, str, str]] = []  # (tenant, conversation, note)
    refused: list[tuple[str, str]] = []  # the budgeted tenant's turns refused with 429
    failed: list[tuple[str, str, str, int]] = []  # turns that failed, and on which worker
    lock = threading.Lock()
    killed = threading.Event()
    victim = 1

    with ExitStack() as stack:
        workers = [stack.enter_context(served(agent, folder, env)) for folder in folders]

        def conversation(index: int) -> None:
            tenant = TENANTS[index % len(TENANTS)]
            name = f"conv-{index}"
            goal: str | None = None
            for turn in range(TURNS // CONVERSATIONS):
                live = [n for n in range(3) if not (killed.is_set() and n == victim)]
                with lock:
                    worker = chooser.choice(live)
                note = f"note {name} turn {turn}"
                try:
                    reply = say(workers[worker], tenant, name, directive(index, turn, goal))
                except openai.RateLimitError:
                    with lock:
                        refused.append((tenant, note))
                    continue
                except (openai.APIConnectionError, openai.APIStatusError):
                    with lock:
                        failed.append((tenant, name, note, worker))
                    continue
                assert reply.startswith("Done: "), reply
                if goal is None and "GoalWrite" in directive(index, turn, goal):
                    goal = re.findall(r"goal-\d{4}", reply)[0]
                with lock:
                    answered.append((tenant, name, note))
                    if len(answered) == KILL_AFTER and not killed.is_set():
                        workers[victim].process.kill()  # SIGKILL: no drain, no cleanup
                        killed.set()

        with ThreadPoolExecutor(max_workers=CONVERSATIONS) as pool:
            list(pool.map(conversation, range(CONVERSATIONS)))
        for tenant in TENANTS:  # the goals as they stand, through a live worker
            if tenant != BUDGETED:
                say(workers[(victim + 1) % 3], tenant, "check", "call GoalList {}")

    assert killed.is_set()
    # Only turns sent to the killed worker failed, and every turn was answered, refused for
    # the budget or failed there.
    assert all(worker == victim for *_, worker in failed), failed
    assert len(answered) + len(refused) + len(failed) == TURNS
    assert len(answered) >= TURNS - CONVERSATIONS - len(refused)
    for n, worker in enumerate(workers):
        if n != victim:
            assert "Traceback" not in worker.stderr, worker.stderr

    # Every answered turn's fact is there once; a killed turn's at most once; nothing else.
    facts = Counter(
        (tenant, text)
        for tenant, text in rows(
            database,
            "SELECT f.tenant, f.text FROM facts f WHERE f.spec = %s AND NOT EXISTS "
            "(SELECT 1 FROM tombstones t WHERE t.target = f.id)",
            SPEC,
        )
    )
    for tenant, name, note in answered:
        if is_note(int(name.split("-")[1]), int(note.rsplit(" ", 1)[1])):
            assert facts.pop((tenant, note)) == 1, note
    lost = {(tenant, note) for tenant, _, note, _ in failed}
    assert set(facts) <= lost and all(count == 1 for count in facts.values()), facts

    # Every session log: seq 1..n, no gap or repeat, every seal valid (read back through the
    # same reader the proof ladder uses).
    from specwire.runtime.pg.pool import open_pool
    from specwire.runtime.sessions.postgres import PostgresSessionLogs

    # Each conversation's goal, read back through a live worker (its continuity is its own).
    final_goals: dict[str, str] = {}
    pool = open_pool(database)
    try:
        sessions = rows(
            database,
            "SELECT tenant, session, array_agg(seq ORDER BY seq) FROM session_log_events "
            "WHERE spec = %s GROUP BY tenant, session",
            SPEC,
        )
        assert len(sessions) == CONVERSATIONS + 2  # and the two goal checks
        for tenant, session, _ in sessions:
            goal_lists = [
                e.payload["text"]
                for e in PostgresSessionLogs(pool, tenant=tenant, spec=SPEC).events(session)
                if e.type == "tool_result" and e.payload["name"] == "GoalList"
            ]
            if tenant != BUDGETED and goal_lists:
                final_goals[tenant] = goal_lists[-1]
        for tenant, session, seqs in sessions:
            assert list(seqs) == list(range(1, len(seqs) + 1)), (tenant, session)
            logs = PostgresSessionLogs(pool, tenant=tenant, spec=SPEC)
            events = list(logs.events(session))
            assert [event.seq for event in events] == list(seqs)
            if [e.payload["text"] for e in events if e.type == "user_message"] == [
                "call GoalList {}"
            ]:
                continue  # a goal check
            results = [e.payload for e in events if e.type == "tool_result"]
            assert all(not result["isError"] for result in results), (tenant, session)
            # The conversation's plan was made, then its goal set and moved on in the order
            # its client sent the changes, whichever worker ran each.
            names = [result["name"] for result in results]
            assert names.count("PlanUpdate") <= 1, names
            if "GoalUpdate" in names:
                assert names.index("GoalWrite") < names.index("GoalUpdate"), names
            typed = [e.payload["text"] for e in events if e.type == "user_message"]
            moves = [int(t.rsplit(" ", 1)[1].rstrip("}")) for t in typed if "GoalUpdate" in t]
            assert moves == sorted(moves), (tenant, session)
            if tenant != BUDGETED:  # its budget ran out before the last move
                name = re.findall(r"conv-\d", next(t for t in typed if "GoalWrite" in t))[0]
                lines = [x for x in final_goals[tenant].splitlines() if f"{name} milestones" in x]
                assert moves and any(f"({moves[-1]}/20)" in line for line in lines), lines
    finally:
        pool.close()

    # The budgeted tenant stopped within one turn of its budget.
    [(used_input, used_turns)] = rows(
        database,
        "SELECT input, turns FROM usage_ledgers WHERE tenant = %s AND spec = %s",
        BUDGETED,
        SPEC,
    )
    assert refused and used_turns > 0
    assert used_input <= BUDGET + used_input / used_turns, (used_input, used_turns)
    assert len(rows(database, "SELECT 1 FROM usage_ledgers WHERE spec = %s", SPEC)) == 3

    # No worker wrote a file in its folder (directories made for the tenants aside).
    for folder in folders:
        written = sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if not p.is_dir())
        assert written == [], written
