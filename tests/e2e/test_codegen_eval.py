"""``codegen eval`` end to end: the shipped scenarios built and run with memory on and off."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner, Result

from specwire.emitters.command import codegen

ROOT = Path(__file__).resolve().parents[2]
EVALS = ROOT / "examples" / "evals"


def invoke(*args: str | Path) -> Result:
    return CliRunner().invoke(codegen, ["eval", *(str(a) for a in args)])


def graders(result: Result) -> dict[tuple[str, str], dict[str, dict[str, object]]]:
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    return {(r["scenario"], r["memory"]): r["graders"] for r in data["results"]}


def test_memory_on_beats_memory_off_on_the_shipped_pickup_scenario() -> None:
    found = graders(invoke(EVALS / "plan-pickup.yaml", "--json"))
    on, off = found[("plan-pickup", "on")], found[("plan-pickup", "off")]
    assert on["pickupSuccess"]["value"] == 1.0 and off["pickupSuccess"]["value"] == 0.0
    # Both ask the new question; only memory off asks the exporter format again.
    assert on["reAskRate"] == {"value": 0.0, "reasked": 0, "questions": 1}
    assert off["reAskRate"] == {"value": 0.5, "reasked": 1, "questions": 2}
    assert on["proofHonesty"]["value"] == 1.0
    assert on["proofHonesty"]["expectedProven"] == 2
    assert off["proofHonesty"]["proven"] == 0
    cost = on["costPerProvenOutcome"]
    assert cost["provenSteps"] == 2 and cost["value"] == cost["tokens"] / 2  # type: ignore[operator]


def test_the_table_compares_memory_on_and_off(tmp_path: Path) -> None:
    result = invoke(EVALS / "returning-customer.yaml", "--workdir", tmp_path)
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0].split() == [
        "scenario", "memory", "re-ask", "rate", "req", "retention", "proof", "honesty",
        "pick-up", "tokens/proven",
    ]  # fmt: skip
    on = next(line for line in lines if line.startswith("returning-customer  on"))
    off = next(line for line in lines if line.startswith("returning-customer  off"))
    assert "0.00 (0/1)" in on and "1.00 (1/1)" in on
    assert "0.67 (2/3)" in off and "0.00 (0/1)" in off
    # The samples were kept, each in its own folder with its own stores.
    [run] = tmp_path.iterdir()
    assert sorted(p.name for p in run.iterdir()) == ["01-off-1", "01-on-1"]


def test_samples_never_share_stores(tmp_path: Path) -> None:
    (tmp_path / "leak.yaml").write_text(
        f"spec: {ROOT / 'examples' / 'support-bot.yaml'}\n"
        "samples: 2\n"
        "sessions:\n"
        "  - user: ['ask about parcel locker: Which parcel locker should we use?']\n"
        "  - user: ['remember: the parcel locker is Locker 7 on Main Street']\n",
        encoding="utf-8",
    )
    found = graders(invoke(tmp_path / "leak.yaml", "--memory", "on", "--json"))
    # Had the second sample seen the first one's fact, it would not have asked.
    assert found[("leak", "on")]["reAskRate"] == {"value": 0.0, "reasked": 0, "questions": 2}


def test_bad_scenarios_and_specs_are_located_lines_with_exit_2(tmp_path: Path) -> None:
    (tmp_path / "channel.yaml").write_text(
        f"spec: {ROOT / 'examples' / 'channel-helpdesk.yaml'}\nsessions: [{{user: [hi]}}]\n",
        encoding="utf-8",
    )
    (tmp_path / "bad-spec.yaml").write_text(
        "name: bad\ntarget: cli\nagent: {model: scripted, instructions: hi}\n"
        "memory: {recallK: 80}\n",
        encoding="utf-8",
    )
    (tmp_path / "uses-bad.yaml").write_text(
        "spec: bad-spec.yaml\nsessions: [{user: [hi]}]\n", encoding="utf-8"
    )
    (tmp_path / "broken.yaml").write_text("spec: x\n\tsessions: []\n", encoding="utf-8")
    broken = invoke(tmp_path / "broken.yaml")
    assert broken.exit_code == 2
    assert broken.stderr.startswith(f"{tmp_path / 'broken.yaml'}:2:1: (file): invalid YAML")
    assert len(broken.stderr.splitlines()) == 1
    assert "Traceback" not in broken.output
    channel = invoke(tmp_path / "channel.yaml")
    assert channel.exit_code == 2
    assert channel.stderr == (
        f"{tmp_path / 'channel.yaml'}:1:7: spec: {ROOT / 'examples' / 'channel-helpdesk.yaml'} "
        "is a channel spec; eval runs cli specs\n"
    )
    spec_error = invoke(tmp_path / "uses-bad.yaml")
    assert spec_error.exit_code == 2
    assert spec_error.stderr.startswith(f"{tmp_path / 'bad-spec.yaml'}:4:")
    assert "recallK" in spec_error.stderr


def test_several_scenarios_add_a_total_per_memory_mode() -> None:
    result = invoke(*sorted(EVALS.glob("*.yaml")), "--json")
    assert result.exit_code == 0, result.output
    totals = {t["memory"]: t["graders"] for t in json.loads(result.stdout)["totals"]}
    on, off = totals["on"], totals["off"]
    assert on["reAskRate"]["value"] < off["reAskRate"]["value"]
    assert on["pickupSuccess"]["value"] > off["pickupSuccess"]["value"]
    assert on["requirementRetention"]["value"] > off["requirementRetention"]["value"]
