"""Hostile-review regressions: paths by which one audience's memory reached another one.

Each test drives real components (the SQLite store, ``wire_memory``, the agent loop with the
scripted model) the way a host does, with the audiences a Slack DM, a public channel or a
managed user give.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

from specwire.runtime.core.ids import new_session_id
from specwire.runtime.core.paths import StoreLayout
from specwire.runtime.core.scopes import AGENT, Audience
from specwire.runtime.core.tool_types import ToolCatalog
from specwire.runtime.facts.session_index import SessionIndex, SessionSummary
from specwire.runtime.loop import LoopResult, run_chat_loop
from specwire.runtime.models import ScriptedModel
from specwire.runtime.sessions.log import SessionLog, read_events
from specwire.runtime.wiring import MemoryDeps, wire_memory

SPEC = "leak-spec"
SECRET = "remember: my salary review is on the fourteenth of march"
ASK = "ask about salary review: when is the salary review?"

ALICE_DM = Audience(user="slack:T1:UA", conversation="slack:T1:DA", private=True)
BOB_IN_CHANNEL = Audience(user="slack:T1:UB", conversation="slack:T1:C1")
ALICE_IN_CHANNEL = Audience(user="slack:T1:UA", conversation="slack:T1:C1")
BOB_DM = Audience(user="slack:T1:UB", conversation="slack:T1:DB", private=True)

SCOPED = {"session_recall": True, "scope": {"default": "user"}}


def session(
    cwd: Path, messages: list[str], memory: dict[str, Any], audience: Audience | None
) -> tuple[LoopResult, Path]:
    catalog = ToolCatalog()
    fragment = {"spec_name": SPEC, "memory": memory}
    deps = MemoryDeps(catalog=catalog, cwd=cwd, log=lambda line: None, audience=audience)
    wired = wire_memory(fragment, deps)
    log = SessionLog(StoreLayout.for_cwd(cwd, SPEC).sessions_dir, new_session_id())
    try:
        result = run_chat_loop(
            model=ScriptedModel(),
            instructions="You help with the Acme payroll product.",
            catalog=catalog,
            session_log=log,
            inputs=messages,
            output=lambda line: None,
            log=lambda line: None,
            **wired.options,
        )
    finally:
        wired.close()
    return result, log.path


def recalled(path: Path) -> list[str]:
    return [
        line
        for event in read_events(path)
        if event.type == "recall"
        for line in event.payload["lines"]
    ]


def test_a_dm_session_summary_is_not_recalled_for_someone_else_in_a_channel(
    tmp_path: Path,
) -> None:
    session(tmp_path, [SECRET], SCOPED, ALICE_DM)
    _, bob = session(tmp_path, [ASK], SCOPED, BOB_IN_CHANNEL)
    assert not any("fourteenth" in line for line in recalled(bob))
    _, bob_dm = session(tmp_path, [ASK], SCOPED, BOB_DM)
    assert not any("fourteenth" in line for line in recalled(bob_dm))
    # Nor for Alice herself in the channel (her DM is hers, and the channel reads the reply).
    _, alice_channel = session(tmp_path, [ASK], SCOPED, ALICE_IN_CHANNEL)
    assert not any("fourteenth" in line for line in recalled(alice_channel))


def test_a_dm_session_summary_is_recalled_back_in_that_persons_dm(tmp_path: Path) -> None:
    session(tmp_path, [SECRET], SCOPED, ALICE_DM)
    _, again = session(tmp_path, [ASK], SCOPED, ALICE_DM)
    assert any(line.startswith("[session:") and "fourteenth" in line for line in recalled(again))


def test_two_managed_users_of_a_tenant_never_recall_each_others_sessions(tmp_path: Path) -> None:
    alice = Audience(user="alice", conversation="chat-a", private=True)
    bob = Audience(user="bob", conversation="chat-b", private=True)
    session(tmp_path, [SECRET], SCOPED, alice)
    _, log = session(tmp_path, [ASK], SCOPED, bob)
    assert not any("fourteenth" in line for line in recalled(log))


def test_a_fact_the_model_kept_narrower_than_its_session_never_widens_through_the_summary(
    tmp_path: Path,
) -> None:
    # A spec whose default is everyone's (memory.scope: agent): the session's summary is an
    # `agent` record, but a Remember that named a narrower scope (Alice's own `user` key) must
    # not be carried into it, or everyone recalls what only Alice may (review finding H7-2).
    wide = {"session_recall": True, "scope": {"default": "agent"}}
    narrow = 'call Remember {"text": "my salary review is on the fourteenth", "scope": "user"}'
    session(tmp_path, [narrow], wide, ALICE_DM)
    _, bob = session(tmp_path, [ASK], wide, BOB_IN_CHANNEL)
    assert not any("fourteenth" in line for line in recalled(bob))
    _, alice = session(tmp_path, [ASK], wide, ALICE_DM)  # still hers, as a fact
    assert any("fourteenth" in line for line in recalled(alice))


def test_records_from_before_scopes_are_agent_records_and_unparsable_ones_nobodys(
    tmp_path: Path,
) -> None:
    index = SessionIndex(StoreLayout.for_cwd(tmp_path, SPEC))
    old = SessionSummary("sess_old", "2026-12-01", "2026-12-01T00:00:00Z", "exit", 1, "salary old")
    index.write(old)
    assert "scope" not in json.loads(index.record_path("sess_old").read_text(encoding="utf-8"))
    odd = dataclasses.replace(old, session_id="sess_odd", outcome="salary odd")
    path = index.write(odd)
    data = json.loads(path.read_text(encoding="utf-8"))
    path.write_text(json.dumps({**data, "scope": "user:"}), encoding="utf-8")
    found = index.recall("salary", 5, visible=BOB_DM.visible())
    assert [summary.session_id for summary in found] == ["sess_old"]
    assert index.recall("salary", 5, visible=ALICE_DM.visible())[0].scope == AGENT
