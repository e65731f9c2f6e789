"""``mcp_servers`` and ``thredz`` on the channel and managed targets (issue 23).

Real bundles built by ``codegen build``, run on their console adapters with the scripted model:

- managed: each tenant gets its own instance of a stdio server (our probe,
  ``tests/support/mcp_stdio_probe_server.py``, run by the system ``python3`` in the bash
  sandbox), working in that tenant's workspace: one tenant's file is out of the other's reach;
  the instances stop with the bundle;
- channel: the npm ``server-filesystem`` is started once and every conversation uses it;
- ``thredz``: our memory server (``codegen memory mcp --allow-writes`` over another agent's
  memory) stands in for Thredz, as in ``test_thredz_backend.py``: the wiki and goals
  (``GoalWrite``, then ``GoalUpdate``) go there, while facts, which are a person's on these
  targets (``memory.scope``), stay in the bundle's own store; a Thredz that does not start
  degrades to the local stores with the one logged line.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from serving_support import (
    build_bundle,
    clean_env,
    memory_server_entry,
    messages,
    processes_running,
    run_bundle,
    served,
    tool_results,
)

from specwire.runtime.tools.shell.sandbox import NEVER_GRANTED, sandbox_unavailable

ROOT = Path(__file__).resolve().parents[2]
PROBE = ROOT / "tests" / "support" / "mcp_stdio_probe_server.py"
SYSTEM_PYTHON = shutil.which("python3", path="/usr/bin:/bin")
# Where .ci/run installs the npm servers (resolved: the sandbox grants the folder the argument
# names, and a checkout's .cache may be a link to another folder).
NPM_CACHE = (ROOT / ".cache" / "mcp-servers").resolve()
CONFINABLE = not any(NPM_CACHE.is_relative_to(folder) for folder in NEVER_GRANTED if folder != "/")
DEGRADED = "[thredz] unavailable — memory degraded to the local backend for this run"
GOAL = "ship the v2 api"


def run(agent: Path, workdir: Path, *texts: str) -> subprocess.CompletedProcess[str]:
    return run_bundle(agent, workdir, *messages(*texts))


def result_of(sessions: Path, name: str) -> dict[str, object]:
    [found] = [result for result in tool_results(sessions) if result["name"] == name]
    return found


def write_spec(tmp_path: Path, name: str, text: str) -> Path:
    spec = tmp_path / f"{name}.yaml"
    spec.write_text(text, encoding="utf-8")
    return build_bundle(spec, tmp_path / f"{name}-out")


probes_running = processes_running


def tenanted_spec(marker: str) -> str:
    """A managed spec of two tenants whose probe server runs ``marker`` (copied per workspace)."""
    return (
        "name: tenanted\ntarget: managed\n"
        "agent: {model: scripted, instructions: You use the tools you are given.}\n"
        "tenants: [{id: acme}, {id: globex}]\ncontinuity: false\n"
        "mcp_servers:\n"
        f"  probe: {{transport: stdio, command: {SYSTEM_PYTHON}, args: [{marker}]}}\n"
    )


def test_a_managed_bundle_runs_one_instance_per_tenant_in_its_workspace(tmp_path: Path) -> None:
    if SYSTEM_PYTHON is None:
        pytest.skip("no system python3 to run the probe server")
    workdir = tmp_path / "work"
    tenants = workdir / ".specwire" / "tenants"
    workspaces = {tenant: tenants / tenant / "workspace" for tenant in ("acme", "globex")}
    if sandbox_unavailable(workdir.parent) is not None:
        pytest.skip(f"no sandbox here: {sandbox_unavailable(workdir.parent)}")
    # The probe runs from a copy in each workspace (always readable inside the sandbox).
    marker = f"probe-{os.getpid()}-{tmp_path.name}.py"
    for workspace in workspaces.values():
        (workspace / "home").mkdir(parents=True)
        shutil.copyfile(PROBE, workspace / marker)
    (workdir / "home").mkdir()
    agent = write_spec(tmp_path, "tenanted", tenanted_spec(marker))
    acme_file = workspaces["acme"] / "acme-only.txt"

    done = run(
        agent,
        workdir,
        "acme/k: call mcp__probe__where {}",
        "globex/k: call mcp__probe__where {}",
        'acme/k: call mcp__probe__write {"path": "acme-only.txt"}',
        f'globex/k: call mcp__probe__read {{"path": "{acme_file}"}}',
        'globex/k: call mcp__probe__read {"path": "../../acme/workspace/acme-only.txt"}',
    )

    assert done.returncode == 0, done.stderr
    assert acme_file.read_text(encoding="utf-8") == "written by the probe\n"
    for tenant, workspace in workspaces.items():
        where = result_of(tenants / tenant, "mcp__probe__where")
        assert where["isError"] is False
        assert f'"cwd": "{workspace}"' in str(where["text"])
    refused = [r for r in tool_results(tenants / "globex") if r["name"] == "mcp__probe__read"]
    assert len(refused) == 2
    for result in refused:
        assert result["isError"] is True and "written by the probe" not in str(result["text"])
    assert not (workspaces["globex"] / "acme-only.txt").exists()
    # Stopping the bundle stopped every instance.
    assert probes_running(marker) == []


def test_managed_serve_offers_each_tenant_its_instance_and_stops_them(tmp_path: Path) -> None:
    if SYSTEM_PYTHON is None:
        pytest.skip("no system python3 to run the probe server")
    if sandbox_unavailable(tmp_path) is not None:
        pytest.skip(f"no sandbox here: {sandbox_unavailable(tmp_path)}")
    workdir = tmp_path / "work"
    marker = f"probe-{os.getpid()}-{tmp_path.name}.py"
    for tenant in ("acme", "globex"):
        workspace = workdir / ".specwire" / "tenants" / tenant / "workspace"
        workspace.mkdir(parents=True)
        shutil.copyfile(PROBE, workspace / marker)
    agent = write_spec(tmp_path, "tenanted", tenanted_spec(marker))
    keys = {"acme": "sk-acme-0123456789abcdef0123", "globex": "sk-globex-0123456789abcdef01"}
    env = clean_env(
        SPECWIRE_TENANT_KEY_ACME=keys["acme"], SPECWIRE_TENANT_KEY_GLOBEX=keys["globex"]
    )

    with served(agent, workdir, env) as server:
        assert len(probes_running(marker)) >= 2  # started before the banner, one per tenant
        for tenant, key in keys.items():
            with server.client(headers={"Authorization": f"Bearer {key}"}) as http:
                response = http.post(
                    "/v1/chat/completions",
                    json={
                        "model": "tenanted",
                        "messages": [{"role": "user", "content": "call mcp__probe__where {}"}],
                    },
                )
            assert response.status_code == 200, response.text
            answer = response.json()["choices"][0]["message"]["content"]
            assert "Done: mcp__probe__where answered" in answer
            where = result_of(workdir / ".specwire" / "tenants" / tenant, "mcp__probe__where")
            assert f'"cwd": "{workdir / ".specwire" / "tenants" / tenant / "workspace"}"' in str(
                where["text"]
            )

    assert server.process.returncode == 0, server.stderr
    assert probes_running(marker) == []


@pytest.fixture(scope="module")
def npm_cache() -> Path:
    if (NPM_CACHE / "node_modules" / ".bin" / "mcp-server-filesystem").exists():
        return NPM_CACHE
    pytest.skip("the npm server-filesystem is not installed (.ci/run installs it)")


def test_a_channel_bundle_shares_one_server_between_conversations(
    tmp_path: Path, npm_cache: Path
) -> None:
    args = json.dumps(["--no-install", "--prefix", str(npm_cache), "mcp-server-filesystem", "."])
    agent = write_spec(
        tmp_path,
        "desk",
        "name: desk\ntarget: channel\n"
        "agent: {model: scripted, instructions: You use the tools you are given.}\n"
        "channels: {webhook: {token: $HOOK_TOKEN}}\nrouting: {sessionKey: thread}\n"
        "continuity: false\n"
        f"mcp_servers:\n  files:\n    transport: stdio\n    command: npx\n    args: {args}\n"
        + ("" if CONFINABLE else "    sandbox: false\n"),
    )
    workdir = tmp_path / "work"
    (workdir / "home").mkdir(parents=True)

    done = run(
        agent,
        workdir,
        't1: call mcp__files__write_file {"path": "shared.txt", "content": "heliotrope"}',
        't2: call mcp__files__read_text_file {"path": "shared.txt"}',
    )

    assert done.returncode == 0, done.stderr
    assert (workdir / "shared.txt").read_text(encoding="utf-8") == "heliotrope"
    read = result_of(workdir / ".specwire" / "sessions", "mcp__files__read_text_file")
    assert read["isError"] is False and "heliotrope" in str(read["text"])
    assert "<mcp_tool_output>" in str(read["text"])


STORE_SPEC = """\
name: store
target: cli
agent: {model: scripted, instructions: You keep the team's memory.}
memory:
  wiki: {}
continuity: {}
"""
WIKI_WRITE = (
    'call wiki_write {"slug": "deploys", "title": "Deploys", "body": "Deploys go out on '
    'fridays.\\n\\n## Sources\\n- the ops runbook", "justification": "team knowledge"}'
)


@pytest.fixture
def stand_in(tmp_path: Path) -> tuple[Path, str]:
    """The store agent's folder and the ``mcp_servers.thredz`` entry serving its memory."""
    store_agent = write_spec(tmp_path, "store", STORE_SPEC)
    store_root = tmp_path / "store-work"
    (store_root / "home").mkdir(parents=True)
    seeded = run(store_agent, store_root, "remember: the store opens at nine")
    assert seeded.returncode == 0, seeded.stderr
    entry = "mcp_servers:\n  thredz:\n" + memory_server_entry(store_agent, store_root)
    return store_root, entry


def facts(root: Path, spec: str, *scope: str) -> list[str]:
    listed = subprocess.run(
        [sys.executable, "-m", "specwire.runtime.owner", "--root", str(root), "--spec", spec]
        + [*scope, "--json", "list"],
        capture_output=True,
        text=True,
        env=clean_env(),
        check=False,
        timeout=120,
    )
    assert listed.returncode == 0, listed.stderr
    return sorted(fact["text"] for fact in json.loads(listed.stdout) if fact["status"] == "live")


def goals(state: Path, spec: str) -> list[tuple[str, str]]:
    listed = json.loads((state / spec / "goals.yaml").read_text(encoding="utf-8"))
    return [(goal["title"], goal["status"]) for goal in listed["goals"]]


CHANNEL_HEAD = """\
name: bot
target: channel
agent: {model: scripted, instructions: You help the team.}
channels: {webhook: {token: $HOOK_TOKEN}}
routing: {sessionKey: thread}
memory:
  wiki: {}
continuity: {scope: spec}
thredz: true
"""


def test_thredz_on_channel_takes_the_wiki_and_goals_and_leaves_facts_local(
    tmp_path: Path, stand_in: tuple[Path, str]
) -> None:
    store_root, entry = stand_in
    agent = write_spec(tmp_path, "bot", CHANNEL_HEAD + entry)
    workdir = tmp_path / "bot-work"
    (workdir / "home").mkdir(parents=True)

    done = run(
        agent,
        workdir,
        "t1: remember: alice takes her tea black",
        f"t1: {WIKI_WRITE}",
        f't2: call GoalWrite {{"title": "{GOAL}"}}',
        't2: call GoalUpdate {"goalId": "goal-0001", "status": "in_progress"}',
        't2: call wiki_get {"slug": "deploys"}',
    )

    assert done.returncode == 0, done.stderr
    assert "[thredz]" not in done.stderr
    assert "Done: mcp__thredz__wiki_write answered" in done.stdout
    # The article is on the server, not in the bot's own wiki.
    assert (store_root / ".specwire" / "wiki" / "store" / "articles" / "deploys.md").exists()
    assert not (workdir / ".specwire" / "wiki" / "bot" / "articles" / "deploys.md").exists()
    got = result_of(workdir / ".specwire" / "sessions", "wiki_get")
    assert "fridays" in str(got["text"]) and "<mcp_tool_output>" in str(got["text"])
    # Goals: local first (authoritative), then mirrored, the update too.
    assert goals(workdir / ".specwire" / "state", "bot") == [(GOAL, "in_progress")]
    assert goals(store_root / ".specwire" / "state", "store") == [(GOAL, "in_progress")]
    # A person's fact never went to the shared server.
    assert facts(store_root, "store") == ["the store opens at nine"]
    assert "alice takes her tea black" in done.stdout
    assert facts(workdir, "bot") == ["alice takes her tea black"]


MANAGED_HEAD = """\
name: concierge
target: managed
agent: {model: scripted, instructions: You help the tenant.}
tenants: [{id: acme}]
memory:
  wiki: {}
continuity: {scope: spec}
thredz: true
"""
# The tenant's one goal list (``scope: spec``): a managed service's goals are per person by
# default (issue 21) and then never mirrored to the one Thredz space.


def test_thredz_on_managed_serves_its_tenant(tmp_path: Path, stand_in: tuple[Path, str]) -> None:
    store_root, entry = stand_in
    agent = write_spec(tmp_path, "concierge", MANAGED_HEAD + entry)
    workdir = tmp_path / "concierge-work"
    (workdir / "home").mkdir(parents=True)

    done = run(
        agent,
        workdir,
        f"acme/k: {WIKI_WRITE}",
        f'acme/k: call GoalWrite {{"title": "{GOAL}"}}',
        'acme/k: call GoalUpdate {"goalId": "goal-0001", "status": "claimed"}',
    )

    assert done.returncode == 0, done.stderr
    assert "[thredz]" not in done.stderr
    assert (store_root / ".specwire" / "wiki" / "store" / "articles" / "deploys.md").exists()
    assert goals(store_root / ".specwire" / "state", "store") == [(GOAL, "claimed")]
    # Nothing went to the tenant's own wiki (the server took it), and the goal is local too.
    tenant_root = workdir / ".specwire" / "tenants" / "acme"
    assert not list((tenant_root / "wiki").rglob("deploys.md"))
    assert goals(tenant_root / "state", "concierge") == [(GOAL, "claimed")]


def test_a_thredz_that_does_not_start_degrades_a_managed_turn(tmp_path: Path) -> None:
    entry = 'mcp_servers:\n  thredz: {transport: stdio, command: "false", sandbox: false}\n'
    agent = write_spec(tmp_path, "concierge", MANAGED_HEAD + entry)
    workdir = tmp_path / "concierge-work"
    (workdir / "home").mkdir(parents=True)

    done = run(agent, workdir, f"acme/k: {WIKI_WRITE}", 'acme/k: call wiki_get {"slug": "deploys"}')

    assert done.returncode == 0, done.stderr
    assert done.stderr.count(DEGRADED) == 1
    # The local wiki took the article, and the turn answered from it.
    assert "acme/k: Done: created deploys v1" in done.stdout
    assert "acme/k: Done: deploys v1 · published" in done.stdout
    articles = workdir / ".specwire" / "tenants" / "acme" / "wiki" / "concierge" / "articles"
    assert (articles / "deploys.md").exists()


LEARNER_HEAD = """\
name: learner
target: channel
agent: {model: scripted, instructions: You help the team.}
channels: {webhook: {token: $HOOK_TOKEN}}
routing: {sessionKey: thread}
memory: {}
continuity: {scope: spec}
thredz: true
learning:
  domain: ops
  sources: [learning/ops.md]
  exam: {dataset: learning/exam.jsonl, graders: [contains]}
"""


def test_learning_with_thredz_and_no_wiki_studies_into_thredz(
    tmp_path: Path, stand_in: tuple[Path, str]
) -> None:
    """CrewHaus: learning needs ``memory.wiki`` or ``thredz``; with Thredz only, the study pass
    writes through its wiki tools and the exam recalls through them."""
    store_root, entry = stand_in
    agent = write_spec(tmp_path, "learner", LEARNER_HEAD + entry)
    workdir = tmp_path / "learner-work"
    (workdir / "home").mkdir(parents=True)
    (workdir / "learning").mkdir()
    (workdir / "learning" / "ops.md").write_text(
        "# Deploys\n\nDeploys go out on fridays after the standup.\n", encoding="utf-8"
    )
    (workdir / "learning" / "exam.jsonl").write_text(
        '{"question": "When do deploys go out?", "answer": "fridays"}\n'
        '{"question": "Who owns billing?", "answer": "the finance team"}\n',
        encoding="utf-8",
    )

    done = run(
        agent,
        workdir,
        "t: call study_sources {}",
        "t: call study_sources {}",
        "t: call run_exam {}",
    )

    assert done.returncode == 0, done.stderr
    assert "[learning] ops: 1 source(s) into Thredz's wiki" in done.stderr
    assert "t: Done: study pass over 1 source(s): 1 article(s) created" in done.stdout
    # A second pass finds the article on the server already saying the same.
    assert "0 updated, 1 unchanged, 0 failed" in done.stdout
    articles = store_root / ".specwire" / "wiki" / "store" / "articles"
    studied = (articles / "study-learning-ops-md.md").read_text(encoding="utf-8")
    assert "fridays" in studied and "## Sources" in studied
    assert not (workdir / ".specwire" / "wiki").exists()
    exam = result_of(workdir / ".specwire" / "sessions", "run_exam")
    assert str(exam["text"]).startswith("exam: 1/2 passed")
    assert "pass line-1" in str(exam["text"]) and "FAIL line-2" in str(exam["text"])


NEWEST_SHAPE_MEMORY = """\
memory:
  embedder: mock/deterministic
  autoRecall: per-turn
  autoCapture: true
thredz: {api_key: $THREDZ_API_KEY, agents: true}
learning:
  domain: ops
  sources: [learning/ops.md]
"""
NEWEST_SHAPES = {
    "channel": (
        "channels:\n  slack: {botToken: $PIN_SLACK_BOT_TOKEN, signingSecret: "
        "$PIN_SLACK_SIGNING_SECRET}\nrouting: {sessionKey: thread}\ncontinuity: {scope: spec}\n",
        "t",
    ),
    "managed": (
        "tenants: [{id: tenant-pin, budget: {maxInputTokens: 100000, maxOutputTokens: 20000}}]\n"
        "continuity: {}\n",
        "tenant-pin/t",
    ),
}


@pytest.mark.parametrize("target", sorted(NEWEST_SHAPES))
def test_a_spec_of_crewhaus_newest_shape_compiles_and_runs_offline(
    tmp_path: Path, npm_cache: Path, target: str
) -> None:
    """Issue 23's acceptance, on the per-turn targets: learning, thredz, mcp_servers,
    per-turn recall and the mock embedder; offline, Thredz (its key unset) degrades in one
    line and the turn answers."""
    shape, key = NEWEST_SHAPES[target]
    args = json.dumps(["--no-install", "--prefix", str(npm_cache), "mcp-server-filesystem", "."])
    agent = write_spec(
        tmp_path,
        "newest",
        f"name: newest\ntarget: {target}\n"
        "agent: {model: scripted, instructions: You help the ops team.}\n"
        + shape
        + NEWEST_SHAPE_MEMORY
        + f"mcp_servers:\n  files:\n    transport: stdio\n    command: npx\n    args: {args}\n"
        + ("" if CONFINABLE else "    sandbox: false\n"),
    )
    workdir = tmp_path / "work"
    (workdir / "home").mkdir(parents=True)

    done = run(
        agent,
        workdir,
        f"{key}: remember: deploys go out on fridays",
        f'{key}: call mcp__files__list_directory {{"path": "."}}',
        f"{key}: call study_sources {{}}",
    )

    assert done.returncode == 0, done.stderr
    assert done.stderr.count(DEGRADED) == 1 and "THREDZ_API_KEY" in done.stderr
    assert f"{key}: Done: remembered (mem_" in done.stdout
    assert f"{key}: Done: mcp__files__list_directory answered" in done.stdout
    # No wiki of its own: the study pass needs Thredz, and says why it could not study.
    assert "study pass over 1 source(s)" in done.stdout and "1 failed" in done.stdout


PER_TURN_HEADS = {
    "channel": "channels: {webhook: {token: $HOOK_TOKEN}}\nrouting: {sessionKey: thread}\n",
    "managed": "tenants: [{id: acme}, {id: globex}]\n",
}


@pytest.mark.parametrize("target", sorted(PER_TURN_HEADS))
def test_a_server_that_does_not_start_stops_a_per_turn_start_in_one_line(
    tmp_path: Path, target: str
) -> None:
    servers = (
        '  broken:\n    transport: stdio\n    command: "false"\n'
        '  spare:\n    transport: stdio\n    command: "false"\n    optional: true\n'
    )
    agent = write_spec(
        tmp_path,
        "fragile",
        f"name: fragile\ntarget: {target}\n"
        "agent: {model: scripted, instructions: You use the tools you are given.}\n"
        + PER_TURN_HEADS[target]
        + f"continuity: false\nmcp_servers:\n{servers}",
    )
    workdir = tmp_path / "work"
    (workdir / "home").mkdir(parents=True)
    key = "t" if target == "channel" else "acme/t"

    done = run(agent, workdir, f"{key}: hello")

    assert done.returncode == 2
    assert done.stderr.startswith("fragile: MCP server 'broken' did not start")
    assert "Traceback" not in done.stderr and done.stdout == ""

    optional_only = servers.split("  spare:\n", 1)[1]
    agent = write_spec(
        tmp_path,
        "sturdy",
        f"name: sturdy\ntarget: {target}\n"
        "agent: {model: scripted, instructions: You use the tools you are given.}\n"
        + PER_TURN_HEADS[target]
        + f"continuity: false\nmcp_servers:\n  spare:\n{optional_only}",
    )
    done = run(agent, workdir, f"{key}: hello")
    assert done.returncode == 0, done.stderr
    assert "MCP server 'spare' did not start" in done.stderr
    assert "(optional: its tools are left out)" in done.stderr
    assert f"{key}: Noted: hello." in done.stdout


def test_a_heartbeat_studies_into_thredz_when_the_spec_learns_there(
    tmp_path: Path, stand_in: tuple[Path, str]
) -> None:
    """Review H10: ``study.on_heartbeat: true`` on a spec that learns into Thredz's wiki (no
    ``memory.wiki``) was accepted and announced ("a study pass every 1 s"), then each tick
    wired the bundle's own memory, found no wiki there and studied nothing, silently."""
    store_root, entry = stand_in
    agent = write_spec(
        tmp_path, "learner", LEARNER_HEAD + "  study: {on_heartbeat: true}\n" + entry
    )
    workdir = tmp_path / "learner-work"
    (workdir / "home").mkdir(parents=True)
    (workdir / "learning").mkdir()
    (workdir / "learning" / "ops.md").write_text(
        "# Deploys\n\nDeploys go out on fridays after the standup.\n", encoding="utf-8"
    )
    (workdir / "learning" / "exam.jsonl").write_text(
        '{"question": "When do deploys go out?", "answer": "fridays"}\n', encoding="utf-8"
    )
    host = subprocess.Popen(
        [sys.executable, str(agent), "console"],
        cwd=workdir,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=clean_env(HOME=str(workdir / "home"), SPECWIRE_HEARTBEAT_S="1"),
    )
    assert host.stderr is not None and host.stdin is not None
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.extend(host.stderr or ()), daemon=True)
    reader.start()
    try:
        # Ticks every second: the first pass comes within seconds; a minute is generous.
        for _ in range(600):
            if any("[heartbeat] learner: study pass over" in line for line in lines):
                break
            if host.poll() is not None:
                break
            time.sleep(0.1)
    finally:
        host.stdin.close()
        code = host.wait(timeout=120)
        reader.join(timeout=10)
    told = "".join(lines)
    assert code == 0, told
    assert "[heartbeat] learner: study pass over 1 source(s): 1 article(s) created" in told
    articles = store_root / ".specwire" / "wiki" / "store" / "articles"
    assert "fridays" in (articles / "study-learning-ops-md.md").read_text(encoding="utf-8")
    assert not (workdir / ".specwire" / "wiki").exists()
