"""End to end: ``mode: full`` with a small budget runs the dream's model phase (the scripted
model, priced by the spec, reporting its usage) and stops at the budget; ``codegen dream status``
shows the calls, the tokens and the cost."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from serving_support import build_bundle, run_in

SPEC_TEXT = """\
name: dreamer
target: cli
agent:
  model: scripted
  instructions: You keep notes.
memory:
  dream:
    every: 1h
    mode: full
    budget_usd: {budget}
    instructions: |
      steps:
      remember: deploys go out on fridays
      remember: the staging database is pg-staging-2
      remember: invoices are due on the first
      remember: the on-call rota lives in the wiki
    prices:
      scripted: {{input: 3, output: 15, cached_input: 0.3}}
continuity: {{}}
"""


run = run_in


def test_a_full_dream_runs_the_model_phase_and_stops_at_its_budget(tmp_path: Path) -> None:
    # One scripted call here reads about 3,000 prompt tokens: about $0.009 at $3 a million, so
    # a $0.02 budget pays for two calls; the third call's prompt alone would pass what is left,
    # so it is not made, and no call's answer passed the budget (each one capped).
    spec = tmp_path / "dreamer.yaml"
    spec.write_text(SPEC_TEXT.format(budget=0.02), encoding="utf-8")
    agent = build_bundle(spec, tmp_path / "out")
    workdir = tmp_path / "work"
    (workdir / "home").mkdir(parents=True)

    dreamt = run([sys.executable, str(agent), "--dream"], workdir)
    assert dreamt.returncode == 0, dreamt.stderr
    assert "model phase: ran (stopped at the budget) — 2 call(s)" in dreamt.stdout
    assert "would leave under 16 answer tokens in the budget" in dreamt.stderr

    state = workdir / ".specwire" / "state" / "dreamer" / "dream" / "state.json"
    model = json.loads(state.read_text(encoding="utf-8"))["lastOutcome"]["model"]
    assert model["ran"] and model["reason"] == "stopped at the budget"
    assert model["calls"] == 2 and model["unmetered_calls"] == 0
    # The cost is the reported usage at the spec's price, and it stayed within the budget.
    cost = (model["input_tokens"] * 3 + model["output_tokens"] * 15) / 1_000_000
    assert abs(model["spent_usd"] - cost) < 1e-6
    assert 0.009 < model["spent_usd"] <= 0.02
    status = run([sys.executable, "-m", "specwire.emitters.command", "dream", "status"], workdir)
    assert status.returncode == 0, status.stderr
    assert (
        f"model phase: ran (stopped at the budget) — 2 call(s), {model['input_tokens']} input "
        f"(0 cached) / {model['output_tokens']} output tokens, ${model['spent_usd']:.6f} of $0.02"
    ) in status.stdout

    again = run([sys.executable, str(agent), "--dream"], workdir)
    assert again.returncode == 0 and "already ran in this window" in again.stdout


def test_an_unpriced_model_is_refused_and_nothing_is_spent(tmp_path: Path) -> None:
    spec = tmp_path / "dreamer.yaml"
    text = SPEC_TEXT.format(budget=0.01).split("    prices:")[0] + "continuity: {}\n"
    spec.write_text(text, encoding="utf-8")
    agent = build_bundle(spec, tmp_path / "out")
    workdir = tmp_path / "work"
    (workdir / "home").mkdir(parents=True)
    dreamt = run([sys.executable, str(agent), "--dream"], workdir)
    assert dreamt.returncode == 0, dreamt.stderr
    assert "model phase: refused: the model scripted has no price" in dreamt.stdout
