"""The research host writes its report without following a link the agent's shell planted."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hosts_support import echo_catalog

from specwire.runtime.hosts.research import EXIT_NO_REPORT, report_folder, run_research
from specwire.runtime.hosts.types import TurnSetup


@pytest.fixture(autouse=True)
def _no_model_override(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SPECWIRE_MODEL", raising=False)
    monkeypatch.delenv("SPECWIRE_SCRIPT", raising=False)


def _research(work: Path, argv: list[str]) -> int:
    return run_research(
        spec_name="market",
        model="scripted",
        instructions="You research markets.",
        goal="Count the vendors.",
        branching_factor=1,
        max_duration_ms=600_000,
        allowed_origins=[],
        build_session=lambda: TurnSetup(catalog=echo_catalog()),
        cwd=work,
        argv=argv,
    )


@pytest.mark.parametrize("planted", ["research-runs", "reports/inner"])
def test_a_symlink_planted_on_the_report_path_is_refused(
    tmp_path: Path, planted: str, capsys: pytest.CaptureFixture[str]
) -> None:
    work, outside = tmp_path / "work", tmp_path / "outside"
    work.mkdir()
    outside.mkdir()
    link = work / planted
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(outside, target_is_directory=True)
    argv = [] if planted == "research-runs" else ["--out", planted]
    code = _research(work, argv)
    err = capsys.readouterr().err
    assert code == EXIT_NO_REPORT
    assert list(outside.iterdir()) == []  # nothing written through the link
    [line] = [line for line in err.splitlines() if "the report was not written" in line]
    assert "symbolic link" in line
    assert "Traceback" not in err


def test_a_symlink_planted_as_the_run_folder_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    work, outside = tmp_path / "work", tmp_path / "outside"
    (work / "research-runs").mkdir(parents=True)
    outside.mkdir()
    planted = "sess_00000000000000aa"
    (work / "research-runs" / planted).symlink_to(outside, target_is_directory=True)
    monkeypatch.setattr("specwire.runtime.hosts.research_run.new_session_id", lambda: planted)
    assert _research(work, []) == EXIT_NO_REPORT
    assert list(outside.iterdir()) == []
    assert "symbolic link" in capsys.readouterr().err


def test_the_report_lands_in_a_plain_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _research(tmp_path, ["--out", "out/reports"]) == 0
    [report] = list((tmp_path / "out" / "reports").glob("sess_*/report.md"))
    assert f"report: {report}" in capsys.readouterr().out
    assert not report.is_symlink() and not report.parent.is_symlink()


def test_report_folder_walks_relative_outputs_and_trusts_absolute_ones(tmp_path: Path) -> None:
    assert report_folder(tmp_path, Path("research-runs")) == (tmp_path, ("research-runs",))
    assert report_folder(tmp_path, Path("./a/./b")) == (tmp_path, ("a", "b"))
    assert report_folder(tmp_path, tmp_path / "x") == ((tmp_path / "x").resolve(), ())
    assert report_folder(tmp_path, Path("../y")) == ((tmp_path.parent / "y").resolve(), ())
    assert os.path.isabs(report_folder(tmp_path, Path("/abs"))[0])
