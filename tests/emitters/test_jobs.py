"""`codegen build --jobs N`: the same bundles, output and messages for every N."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from emitter_cases import EXAMPLES, EXAMPLES_DIR

from specwire.emitters.command import codegen

BAD = "name: bad\ntarget: cli\nagent: {model: scripted, instructions: hi}\nmemory: {recallK: 80}\n"


def invoke(*args: str | Path) -> Result:
    return CliRunner().invoke(codegen, [str(a) for a in args])


def files_under(path: Path) -> dict[str, bytes]:
    return {p.relative_to(path).as_posix(): p.read_bytes() for p in path.rglob("*") if p.is_file()}


def test_jobs_build_the_same_bundles_with_the_same_output(tmp_path: Path) -> None:
    runs = {}
    for jobs in ("1", "2", "auto"):
        out = tmp_path / f"out-{jobs}"
        result = invoke("build", *EXAMPLES, "--out", out, "--jobs", jobs, "--no-cache")
        assert result.exit_code == 0, result.output
        runs[jobs] = (result.stdout.replace(str(out), "OUT"), files_under(out))
    assert runs["1"] == runs["2"] == runs["auto"]
    assert len(runs["1"][1]) == 2 * len(EXAMPLES)


def test_jobs_report_every_error_in_spec_order_and_write_nothing(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(BAD, encoding="utf-8")
    missing = tmp_path / "missing.yaml"
    specs = [EXAMPLES_DIR / "support-bot.yaml", bad, *EXAMPLES[:3], missing, bad]
    seen = []
    for jobs in ("1", "2"):
        out = tmp_path / f"out-{jobs}"
        result = invoke("build", *specs, "--out", out, "--jobs", jobs)
        assert result.exit_code == 2
        assert result.stdout == ""
        assert not out.exists()
        seen.append(result.stderr)
    assert seen[0] == seen[1]
    assert seen[0].splitlines() == [
        f"{bad}:4:19: memory.recallK: must be between 1 and 50 (got 80)",
        f"{missing}:1:1: (root): cannot read the file: No such file or directory",
        f"{bad}:4:19: memory.recallK: must be between 1 and 50 (got 80)",
    ]


@pytest.mark.parametrize("value", ["0", "-1", "many"])
def test_a_bad_jobs_value_is_a_usage_error(value: str) -> None:
    result = invoke("build", EXAMPLES_DIR / "support-bot.yaml", "--jobs", value)
    assert result.exit_code == 2
    assert "--jobs" in result.stderr
