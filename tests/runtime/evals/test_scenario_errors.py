"""Scenario files: what loads, and one located line per problem for what does not."""

from __future__ import annotations

from pathlib import Path

import pytest

from specwire.runtime.evals.scenario import Pickup, ScenarioError, load_scenario

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"


def write(tmp_path: Path, text: str, name: str = "case.yaml") -> Path:
    (tmp_path / "spec.yaml").write_text("name: x\n", encoding="utf-8")
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def problems(tmp_path: Path, text: str) -> list[str]:
    path = write(tmp_path, text)
    with pytest.raises(ScenarioError) as caught:
        load_scenario(path)
    prefix = f"{path}:"
    assert all(line.startswith(prefix) for line in caught.value.lines)
    return [line.removeprefix(prefix) for line in caught.value.lines]


GOOD = """\
spec: spec.yaml
samples: 2
sessions:
  - user: ["remember: invoices go out in EUR", "plan: Fix: Reproduce; Patch the exporter"]
  - user: ["hello again"]
expect:
  requirements: ["invoices go out in EUR"]
  pickup: {session: 2, step: "Patch the exporter"}
  proven: ["Reproduce"]
"""


def test_a_good_scenario_loads(tmp_path: Path) -> None:
    scenario = load_scenario(write(tmp_path, GOOD, "good-one.yaml"))
    assert scenario.name == "good-one"
    assert scenario.spec == tmp_path / "spec.yaml"
    assert scenario.samples == 2
    assert scenario.sessions[1] == ("hello again",)
    assert scenario.pickup == Pickup(2, "Patch the exporter")
    assert scenario.spec_mark == (1, 7)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("spec: [\n", ["2:1: (file): invalid YAML: expected the node content"]),
        (
            "a: 1\na: 2\n",
            [
                '2:1: (file): invalid YAML: found duplicate key "a" with value "2"'
                ' (original value: "1")'
            ],
        ),
        ("- a\n", ["1:1: (file): a scenario is a mapping of keys (spec, sessions, expect)"]),
        ("spec: nowhere.yaml\nsessions: [{user: [hi]}]\n", ["1:7: spec: no spec file at "]),
        (
            "spec: spec.yaml\nsession: []\n",
            [
                "2:1: session: unknown key (allowed: scenario, description, spec, samples, "
                "sessions, expect)",
                "1:1: sessions: missing: a list of sessions, each `user: [messages]`",
            ],
        ),
        (
            "spec: spec.yaml\nsamples: 0\nsessions:\n  - user: []\n  - {user: [hi], bot: [x]}\n",
            [
                "2:10: samples: must be a whole number from 1 to 20 (got 0)",
                "4:11: sessions[0].user: must hold at least one message",
                "5:18: sessions[1].bot: unknown key (allowed: user)",
            ],
        ),
        (
            "spec: spec.yaml\nsessions: [{user: [hello]}]\nexpect:\n"
            "  requirements: [never said, the of]\n  pickup: {session: 2, step: x}\n",
            [
                "4:18: expect.requirements: 'never said' is never stated in a user message",
                "4:30: expect.requirements: has no word to look for (only stop words)",
                "5:11: expect.pickup: a pickup needs at least two sessions",
            ],
        ),
        (
            "spec: spec.yaml\nsessions: [{user: [hi]}, {user: [patch it now]}]\nexpect:\n"
            "  pickup: {session: 2, step: patch it}\n",
            [
                "4:30: expect.pickup.step: every word of the step is in the session's first "
                "message: the user would be naming it, not the agent picking it up",
            ],
        ),
    ],
)
def test_bad_scenarios_are_located_lines(tmp_path: Path, text: str, expected: list[str]) -> None:
    found = problems(tmp_path, text)
    assert len(found) == len(expected), found
    for line, want in zip(found, expected, strict=True):
        assert line.startswith(want), (line, want)


def test_an_unreadable_file_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(ScenarioError) as caught:
        load_scenario(tmp_path / "missing.yaml")
    assert caught.value.lines == (
        f"{tmp_path / 'missing.yaml'}:1:1: (file): cannot read it: No such file or directory",
    )


def test_the_shipped_scenarios_load() -> None:
    shipped = sorted((EXAMPLES / "evals").glob("*.yaml"))
    assert len(shipped) >= 3
    for path in shipped:
        assert load_scenario(path).spec.is_file()
