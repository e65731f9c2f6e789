"""End to end: the dream a channel or managed host schedules after a turn runs its model phase
(``mode: full`` with a budget) with the turns' model, and stops at the budget: the scripted
model reports its usage, each call's answer is capped by what is left, and a call whose prompt
alone would pass the budget is not made. On managed each tenant dreams in its own window, with
its own budget and record, and what it spent is in the tenant's usage ledger as the dream's
kind (``codegen memory usage``). ``codegen dream run --bundle`` runs the same model phase from the
owner's command line; ``codegen dream status`` shows the calls, tokens and cost of each."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from serving_support import build_bundle, run_in

# About 3,000 prompt tokens a call at $3 a million: $0.009 each; $0.03 pays for a few calls.
BUDGET = 0.03
DREAM = """\
memory:
  dream:
    every: 1h
    mode: full
    budget_usd: 0.03
    instructions: |
      steps:
      remember: deploys go out on fridays
      remember: the staging database is pg-staging-2
      remember: invoices are due on the first
      remember: the on-call rota lives in the wiki
      remember: the office closes at six
      remember: the printer is on floor two
    prices:
      scripted: {input: 3, output: 15, cached_input: 0.3}
"""
CHANNEL = (
    """\
name: dream-channel
target: channel
agent:
  model: scripted
  instructions: You help the team.
channels:
  webhook:
    token: $DREAM_WEBHOOK_TOKEN
routing:
  sessionKey: thread
"""
    + DREAM
)
MANAGED = (
    """\
name: dream-managed
target: managed
agent:
  model: scripted
  instructions: You help the guests.
tenants:
  - id: acme
  - id: globex
"""
    + DREAM
)


run = run_in


def _bundle(tmp_path: Path, text: str) -> tuple[Path, Path]:
    spec = tmp_path / "spec.yaml"
    spec.write_text(text, encoding="utf-8")
    agent = build_bundle(spec, tmp_path / "out")
    workdir = tmp_path / "work"
    (workdir / "home").mkdir(parents=True)
    return agent, workdir


def _model_phase(state: Path) -> dict[str, Any]:
    model: dict[str, Any] = json.loads(state.read_text(encoding="utf-8"))["lastOutcome"]["model"]
    return model


def model_ran_at(state: Path) -> str:
    ledger: dict[str, Any] = json.loads(state.read_text(encoding="utf-8"))["modelLedger"]
    return str(ledger["since"])


def _stopped_at_the_budget(model: dict[str, Any]) -> None:
    assert model["ran"] and model["reason"] == "stopped at the budget", model
    assert model["model"] == "scripted" and model["budget_usd"] == BUDGET
    assert model["calls"] >= 2 and model["unmetered_calls"] == 0
    # The cost is the reported usage at the spec's price, and no call passed the budget.
    cost = (model["input_tokens"] * 3 + model["output_tokens"] * 15) / 1_000_000
    assert abs(model["spent_usd"] - cost) < 1e-6
    assert 0 < model["spent_usd"] <= BUDGET


def _status_line(model: dict[str, Any]) -> str:
    return (
        f"model phase: ran (stopped at the budget) — {model['calls']} call(s), "
        f"{model['input_tokens']} input (0 cached) / {model['output_tokens']} output tokens, "
        f"${model['spent_usd']:.6f} of ${BUDGET:g}"
    )


def _codegen(workdir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return run([sys.executable, "-m", "specwire.emitters.command", "dream", *args], workdir)


def test_a_channel_bot_s_scheduled_dream_runs_the_model_phase_to_its_budget(
    tmp_path: Path,
) -> None:
    agent, workdir = _bundle(tmp_path, CHANNEL)
    turned = run([sys.executable, str(agent), "console", "--message", "t1: hello"], workdir)
    assert turned.returncode == 0, turned.stderr
    assert "t1: Noted: hello." in turned.stdout
    # The dream ran after the turn, in the background, and the console waited for it.
    assert "[dream] dream-channel: ok (model phase: stopped at the budget)" in turned.stderr
    state = workdir / ".specwire" / "state" / "dream-channel" / "dream" / "state.json"
    model = _model_phase(state)
    _stopped_at_the_budget(model)
    status = _codegen(workdir, "status")
    assert status.returncode == 0, status.stderr
    assert _status_line(model) in status.stdout
    assert (
        f"model phases to date: 1 run(s) since {model_ran_at(state)}: {model['calls']} call(s)"
    ) in status.stdout
    # The session acted through the memory tools: its facts are in the spec's store.
    listed = run(
        [sys.executable, "-m", "specwire.emitters.command", "memory", "list", "--json"], workdir
    )
    assert listed.returncode == 0, listed.stderr
    assert "deploys go out on fridays" in listed.stdout

    again = run([sys.executable, str(agent), "console", "--message", "t1: again"], workdir)
    assert again.returncode == 0, again.stderr
    assert "already ran in this window" in again.stderr
    assert _model_phase(state) == model  # nothing more was spent in the window


def test_each_managed_tenant_dreams_with_its_own_budget_and_record(tmp_path: Path) -> None:
    agent, workdir = _bundle(tmp_path, MANAGED)
    turned = run(
        [
            sys.executable,
            str(agent),
            "console",
            "--message",
            "acme/s1: hello",
            "--message",
            "globex/s1: hello",
        ],
        workdir,
    )
    assert turned.returncode == 0, turned.stderr
    ran = "[dream] dream-managed: ok (model phase: stopped at the budget)"
    assert turned.stderr.count(ran) == 2
    tenants = workdir / ".specwire" / "tenants"
    for tenant in ("acme", "globex"):
        state = tenants / tenant / "state" / "dream-managed" / "dream" / "state.json"
        model = _model_phase(state)
        _stopped_at_the_budget(model)  # each tenant's run had the whole budget to itself
        status = _codegen(workdir, "--tenant", tenant, "status")
        assert status.returncode == 0, status.stderr
        assert _status_line(model) in status.stdout
        # The session's log is the tenant's, beside its conversations.
        logs = list((tenants / tenant / "sessions").glob("sess_*.jsonl"))
        targets = {
            json.loads(log.read_text(encoding="utf-8").splitlines()[0])["payload"].get("target")
            for log in logs
        }
        assert targets == {"managed", "dream"}
        # What the dream spent for the tenant is in its usage ledger, as a kind of its own
        # beside the one turn (which alone counts against a budget).
        usage = run(
            [sys.executable, "-m", "specwire.emitters.command", "memory", "--tenant", tenant]
            + ["--json", "usage"],
            workdir,
        )
        assert usage.returncode == 0, usage.stderr
        [ledger] = json.loads(usage.stdout)
        assert ledger["turns"]["turns"] == 1
        assert ledger["dream"] == {
            "runs": 1,
            "calls": model["calls"],
            "input": model["input_tokens"],
            "output": model["output_tokens"],
            "cached": model["cached_tokens"],
            "costUsd": model["spent_usd"],
        }


def test_codegen_dream_run_with_the_bundle_runs_its_model_phase(tmp_path: Path) -> None:
    agent, workdir = _bundle(tmp_path, MANAGED)
    ran = _codegen(workdir, "--tenant", "acme", "run", "--bundle", str(agent.parent))
    assert ran.returncode == 0, ran.stderr
    assert "model phase: ran (stopped at the budget)" in ran.stdout
    tenants = workdir / ".specwire" / "tenants"
    model = _model_phase(tenants / "acme" / "state" / "dream-managed" / "dream" / "state.json")
    _stopped_at_the_budget(model)
    status = _codegen(workdir, "--tenant", "acme", "status")
    assert status.returncode == 0, status.stderr
    assert _status_line(model) in status.stdout
    # What it spent is in the tenant's usage ledger, as the scheduled dream's (no turn).
    usage = run(
        [sys.executable, "-m", "specwire.emitters.command", "memory", "--tenant", "acme"]
        + ["--json", "usage"],
        workdir,
    )
    assert usage.returncode == 0, usage.stderr
    [ledger] = json.loads(usage.stdout)
    assert ledger["turns"]["turns"] == 0
    assert ledger["dream"]["runs"] == 1 and ledger["dream"]["calls"] == model["calls"]
    assert ledger["dream"]["costUsd"] == model["spent_usd"]
    # Only that tenant dreamt.
    assert not (tenants / "globex" / "state" / "dream-managed" / "dream").exists()
    # A flag overrides the bundle's setting: a deterministic run spends nothing.
    plain = _codegen(
        workdir, "--tenant", "globex", "run", "--bundle", str(agent), "--mode", "deterministic"
    )
    assert plain.returncode == 0, plain.stderr
    assert "model phase: mode is deterministic: no model phase" in plain.stdout
    assert not (tenants / "globex" / "usage").exists()  # nothing spent, nothing recorded

    # Without the bundle there is no memory to wire a session over: the run says so.
    bare = _codegen(
        workdir,
        "--tenant",
        "acme",
        "run",
        "--force",
        "--mode",
        "full",
        "--budget-usd",
        "1",
        "--model",
        "claude-sonnet-4-5",
    )
    assert bare.returncode == 0, bare.stderr
    assert "not run: no model session was given" in bare.stdout
    assert "--bundle AGENT_PY" in bare.stdout
