"""``codegen dream run|status``: the counts table, the state, one-line errors with status 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from dream_support import SPEC, seed

from specwire.emitters.command import codegen
from specwire.runtime.owner.dream_command import duration_s, main


def _seeded(tmp_path: Path) -> list[str]:
    seed(tmp_path / ".specwire")
    return ["--root", str(tmp_path), "--spec", SPEC]


def test_run_prints_the_counts_then_a_second_run_is_skipped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    where = _seeded(tmp_path)
    assert main([*where, "run"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"dream {SPEC}: ok (window dream:{SPEC}:")
    assert "facts.superseded" in out and "continuity.trash_purged" in out
    assert "model phase: mode is deterministic: no model phase" in out
    assert main([*where, "run"]) == 0
    out = capsys.readouterr().out
    assert f"dream {SPEC}: skipped" in out and "already ran in this window" in out


def test_status_prints_the_last_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    where = _seeded(tmp_path)
    assert main([*where, "status"]) == 0
    assert "no run recorded yet" in capsys.readouterr().out
    assert main([*where, "run", "--mode", "full", "--budget-usd", "1", "--model", "x/y"]) == 0
    capsys.readouterr()
    assert main([*where, "status"]) == 0
    out = capsys.readouterr().out
    assert f"dream {SPEC}: last run " in out and "facts.swept" in out
    assert "model phase: refused: the model x/y has no price" in out
    assert main([*where, "--json", "status"]) == 0
    state = json.loads(capsys.readouterr().out)
    assert state["status"] == "ok" and state["spec"] == SPEC


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["run", "--every", "often"], "--every 'often': a duration looks like"),
        (["run", "--every", "1m"], "below the 300s (5m) floor"),
        (["run", "--budget-usd", "-2"], "budget_usd must be a number"),
        (["--spec", "nope", "status"], "no memory of the spec 'nope' under"),
        (["--spec", "nope", "run"], "no memory of the spec 'nope' under"),
    ],
)
def test_bad_input_is_one_line_and_status_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    seed(tmp_path / ".specwire")
    argv = ["--root", str(tmp_path), *args]
    if "--spec" not in args:
        argv[2:2] = ["--spec", SPEC]
    code = main(argv)
    err = capsys.readouterr().err
    assert code == 2
    assert err.count("\n") == 1 and err.startswith("codegen dream: ") and message in err
    assert "Traceback" not in err


def test_no_state_directory_is_status_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--root", str(tmp_path), "run"]) == 2
    assert "no state directory" in capsys.readouterr().err


def test_an_unknown_mode_is_refused_by_the_parser(tmp_path: Path) -> None:
    assert main(["--root", str(tmp_path), "run", "--mode", "nightly"]) == 2


def test_durations() -> None:
    assert duration_s("5m") == 300
    assert duration_s("6h") == 21_600
    assert duration_s("1d") == 86_400
    assert duration_s("900000ms") == 900


def test_codegen_dream_delegates_to_the_runtime(tmp_path: Path) -> None:
    seed(tmp_path / ".specwire")
    result = CliRunner().invoke(
        codegen, ["dream", "--root", str(tmp_path), "--spec", SPEC, "run", "--every", "1h"]
    )
    assert result.exit_code == 0, result.output
    assert f"dream {SPEC}: ok" in result.output


@pytest.mark.parametrize("where", [["--root"], ["run", "--root"]])
def test_the_agents_folder_is_root_as_in_codegen_memory(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], where: list[str]
) -> None:
    from specwire.runtime.owner.command import build_parser as memory_parser
    from specwire.runtime.owner.dream_command import build_parser as dream_parser

    seed(tmp_path / ".specwire")
    argv = [*where, str(tmp_path), "--spec", SPEC]
    if argv[0] != "run":
        argv.append("run")
    assert main(argv) == 0
    assert f"dream {SPEC}: ok" in capsys.readouterr().out
    for parser in (memory_parser(), dream_parser()):
        shown = parser.format_help()
        assert "--root ROOT" in shown and "--cwd" not in shown


def test_the_old_cwd_flag_still_works_unshown(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    seed(tmp_path / ".specwire")
    assert main(["--cwd", str(tmp_path), "--spec", SPEC, "status"]) == 0
    assert "no run recorded yet" in capsys.readouterr().out
