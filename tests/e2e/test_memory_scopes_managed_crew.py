"""Issue 21 acceptance on built managed and crew bundles.

Managed (``agent.py serve`` driven by the official ``openai`` client): two users of one tenant
(the request's ``user`` field) never see each other's facts, whatever session they use; the
tenant's ``agent`` facts, written by the owner through the store, reach both.

Crew (``agent.py --role …``): a role's fact is its own; one it remembers with ``scope: crew``
reaches every role.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import openai
import pytest
from serving_support import Served, build_bundle, clean_env, served

from specwire.runtime.core.paths import StoreLayout
from specwire.runtime.facts.store import FactStore

pytestmark = pytest.mark.e2e

KEY = "sk-scopes-0123456789abcdef0123"
MANAGED_SPEC = """\
name: scoped-concierge
target: managed
agent:
  model: scripted
  instructions: You help the guests.
tenants:
  - id: acme
memory:
  autoRecall: false
"""
CREW_SPEC = """\
name: scoped-crew
target: crew
model: scripted
entry: researcher
roles:
  researcher:
    instructions: You gather facts.
  writer:
    instructions: You write.
memory:
  autoRecall: false
"""


@pytest.fixture(scope="module")
def concierge(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    base = tmp_path_factory.mktemp("scoped-concierge")
    spec = base / "spec.yaml"
    spec.write_text(MANAGED_SPEC, encoding="utf-8")
    agent = build_bundle(spec, base / "out")
    work = base / "work"
    # The owner's fact for the whole tenant, written before the service starts.
    layout = StoreLayout(work / ".specwire" / "tenants" / "acme", "scoped-concierge")
    layout.root.mkdir(parents=True)
    store = FactStore.open(layout.facts_db)
    try:
        store.remember("the spa opens at seven")
    finally:
        store.close()
    with served(agent, work, clean_env(SPECWIRE_TENANT_KEY_ACME=KEY)) as server:
        yield server
    assert "Traceback" not in server.stderr


def say(server: Served, user: str | None, session: str, text: str) -> str:
    client = openai.OpenAI(
        base_url=f"{server.url}/v1",
        api_key=KEY,
        max_retries=0,
        default_headers={"X-Session-Id": session},
    )
    extra = {"user": user} if user is not None else {}
    completion = client.chat.completions.create(
        model="scoped-concierge", messages=[{"role": "user", "content": text}], **extra
    )
    return completion.choices[0].message.content or ""


def test_two_users_of_a_tenant_never_see_each_others_facts(concierge: Served) -> None:
    told = say(concierge, "alice", "alice-1", "remember: my room is 1204")
    assert "remembered" in told, told
    assert "1204" in say(concierge, "alice", "alice-2", "recall: room")  # another session, hers
    bob = say(concierge, "bob", "bob-1", "recall: room")
    assert bob.startswith("Done: ") and "1204" not in bob
    # Bob in Alice's session id is still Bob: the session does not carry her user facts.
    assert "1204" not in say(concierge, "bob", "alice-1", "recall: room")
    told = say(concierge, "bob", "bob-1", "remember: my room is 88")
    assert "remembered" in told, told
    alice = say(concierge, "alice", "alice-3", "recall: room")
    assert "1204" in alice and " 88" not in alice


def test_the_tenants_agent_facts_reach_every_user(concierge: Served) -> None:
    for user in ("alice", "bob"):
        assert "seven" in say(concierge, user, f"{user}-spa", "recall: spa")
    # A request without a user keeps its facts in its session.
    assert "remembered" in say(concierge, None, "walk-in", "remember: the walk-in wants a taxi")
    assert "taxi" in say(concierge, None, "walk-in", "recall: taxi")
    assert "wants a taxi" not in say(concierge, "alice", "alice-taxi", "recall: taxi")


@pytest.fixture(scope="module")
def crew(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    base = tmp_path_factory.mktemp("scoped-crew")
    spec = base / "spec.yaml"
    spec.write_text(CREW_SPEC, encoding="utf-8")
    agent = build_bundle(spec, base / "out")
    work = base / "work"
    work.mkdir()
    return agent, work


def run_role(crew: tuple[Path, Path], role: str, message: str) -> str:
    agent, work = crew
    done = subprocess.run(
        [sys.executable, str(agent), "--role", role, "--message", message],
        cwd=work,
        env=clean_env(),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    return done.stdout


def test_a_roles_fact_is_its_own_and_a_crew_fact_is_everyones(crew: tuple[Path, Path]) -> None:
    assert "remembered" in run_role(crew, "researcher", "remember: the source is Dana")
    assert "Dana" in run_role(crew, "researcher", "recall: source")
    writer = run_role(crew, "writer", "recall: source")
    assert "Done: " in writer and "Dana" not in writer
    shared = 'call Remember {"text": "the deadline is Friday noon", "scope": "crew"}'
    assert "remembered" in run_role(crew, "researcher", shared)
    assert "Friday noon" in run_role(crew, "writer", "recall: deadline")
    # A role may not share wider than the crew: agent is not among its scopes.
    wider = run_role(crew, "writer", 'call Remember {"text": "x marks it", "scope": "agent"}')
    assert "That failed" in wider and "x marks it" not in run_role(
        crew, "researcher", "recall: marks"
    )


def delegated_recalls(crew: tuple[Path, Path]) -> list[str]:
    """The Recall results of every sub-session delegation opened so far (the child's log)."""
    _, work = crew
    found = []
    # In the order they were written: session ids are random, so their names are not.
    logs = (work / ".specwire" / "sessions").glob("sess_*.jsonl")
    for log in sorted(logs, key=lambda path: (path.stat().st_mtime_ns, path.name)):
        events = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
        if "parent" not in events[0]["payload"]:
            continue
        found += [
            event["payload"]["text"]
            for event in events
            if event["type"] == "tool_result" and event["payload"]["name"] == "Recall"
        ]
    return found


def test_a_delegated_role_runs_with_its_own_memory(crew: tuple[Path, Path]) -> None:
    assert "remembered" in run_role(crew, "writer", "remember: the headline is Rivers Rise")
    assert "remembered" in run_role(crew, "researcher", "remember: the tip came from Eli")
    # The researcher hands the writer recalls: the writer's sub-session sees the writer's facts,
    # not the researcher's.
    for task in ("recall: headline", "recall: tip"):
        call = json.dumps({"role": "writer", "task": task})
        assert "answer from writer" in run_role(crew, "researcher", f"call Delegate {call}")
    # Session ids are random, so the logs are matched by the query each recall answered.
    recalls = delegated_recalls(crew)
    [headline] = [text for text in recalls if '"headline"' in text]
    [tip] = [text for text in recalls if '"tip"' in text]
    assert "Rivers Rise" in headline
    assert "Eli" not in tip and tip.startswith("no memories matched")
    assert "Rivers Rise" not in run_role(crew, "researcher", "recall: headline")
