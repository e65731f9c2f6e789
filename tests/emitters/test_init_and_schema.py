"""`codegen init` writes a starter spec per target that `codegen check` accepts; every example
and starter points editors at the committed JSON Schema, which is what `codegen schema` prints."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from emitter_cases import EXAMPLES

from specwire.emitters.command import codegen, schema_text
from specwire.emitters.init import TARGETS, name_for

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = ROOT / "schema" / "specwire.schema.json"
SCHEMA_LINE = "# yaml-language-server: $schema="


def invoke(*args: str | Path) -> Result:
    return CliRunner().invoke(codegen, [str(a) for a in args])


def test_the_committed_schema_is_up_to_date() -> None:
    assert SCHEMA.read_text(encoding="utf-8") == schema_text(), (
        "schema/specwire.schema.json is stale: run "
        "`.venv/bin/codegen schema > schema/specwire.schema.json`"
    )


@pytest.mark.parametrize("example", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_every_example_points_at_the_committed_schema(example: Path) -> None:
    first = example.read_text(encoding="utf-8").splitlines()[0]
    assert first == f"{SCHEMA_LINE}../schema/specwire.schema.json"
    assert (example.parent / "../schema/specwire.schema.json").resolve() == SCHEMA


def test_init_covers_every_target() -> None:
    assert set(TARGETS) == {"cli", "channel", "managed", "research", "crew"}


@pytest.mark.parametrize("target", TARGETS)
def test_init_writes_a_starter_that_checks_and_builds(tmp_path: Path, target: str) -> None:
    spec = tmp_path / f"{target}-agent.yaml"
    result = invoke("init", "--target", target, spec)
    assert result.exit_code == 0, result.output
    text = spec.read_text(encoding="utf-8")
    assert text.splitlines()[0] == f"{SCHEMA_LINE}specwire.schema.json"
    assert f"target: {target}\n" in text
    assert f"name: {target}-agent\n" in text
    assert (tmp_path / "specwire.schema.json").read_text(encoding="utf-8") == schema_text()
    checked = invoke("check", spec)
    assert (checked.exit_code, checked.output) == (0, f"ok {spec}\n")
    built = invoke("build", spec, "--out", tmp_path / "out", "--no-cache")
    assert built.exit_code == 0, built.output
    assert (tmp_path / "out" / f"{target}-agent" / "agent.py").is_file()


def test_init_never_overwrites(tmp_path: Path) -> None:
    spec = tmp_path / "agent.yaml"
    spec.write_text("mine\n", encoding="utf-8")
    result = invoke("init", spec)
    assert result.exit_code == 2
    assert result.output == f"codegen: {spec} already exists; not overwriting it\n"
    assert spec.read_text(encoding="utf-8") == "mine\n"
    link = tmp_path / "link.yaml"
    link.symlink_to(tmp_path / "nowhere.yaml")
    assert invoke("init", link).exit_code == 2
    assert not (tmp_path / "nowhere.yaml").exists()


def test_init_keeps_an_existing_schema_file_and_takes_another_reference(tmp_path: Path) -> None:
    (tmp_path / "specwire.schema.json").write_text("{}\n", encoding="utf-8")
    assert invoke("init", tmp_path / "a.yaml").exit_code == 0
    assert (tmp_path / "specwire.schema.json").read_text(encoding="utf-8") == "{}\n"
    other = tmp_path / "elsewhere"
    url = "https://example.org/specwire.schema.json"
    assert invoke("init", "--schema", url, other / "b.yaml").exit_code == 0
    assert (other / "b.yaml").read_text(encoding="utf-8").startswith(f"{SCHEMA_LINE}{url}\n")
    assert not (other / "specwire.schema.json").exists()


def test_init_defaults_to_agent_yaml_in_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert invoke("init").exit_code == 0
    assert "name: agent\ntarget: cli\n" in (tmp_path / "agent.yaml").read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("stem", "name"),
    [("support bot!", "support-bot"), ("...", "my-agent"), ("true", "true"), ("a.b_c", "a.b_c")],
)
def test_a_starter_is_named_after_its_file(tmp_path: Path, stem: str, name: str) -> None:
    assert name_for(stem) == name
    spec = tmp_path / f"{stem}.yaml"
    assert invoke("init", spec).exit_code == 0
    assert invoke("check", spec).exit_code == 0
