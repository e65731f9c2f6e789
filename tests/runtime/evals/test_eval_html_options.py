"""``codegen eval``'s report options refused before anything is built: one line, exit 2."""

from __future__ import annotations

from pathlib import Path

import pytest

from specwire.runtime.evals.agent import BuiltAgent
from specwire.runtime.evals.command import main


def never_build(spec: Path, memory: bool) -> BuiltAgent:
    raise AssertionError("nothing is built when the options are wrong")


@pytest.fixture
def scenario(tmp_path: Path) -> Path:
    (tmp_path / "spec.yaml").write_text("name: x\n", encoding="utf-8")
    path = tmp_path / "case.yaml"
    path.write_text("spec: spec.yaml\nsessions: [{user: [hi]}]\n", encoding="utf-8")
    return path


def refused(args: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    assert main(args, never_build) == 2
    out, err = capsys.readouterr()
    assert out == "" and len(err.splitlines()) == 1 and "Traceback" not in err
    return err.strip()


def test_report_options_that_cannot_work_are_one_line(
    scenario: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "no-such-folder" / "r.html"
    assert refused([str(scenario), "--html", str(missing)], capsys) == (
        f"codegen eval: --html {missing}: its folder does not exist"
    )
    assert refused([str(scenario), "--history", str(tmp_path)], capsys) == (
        f"codegen eval: --history {tmp_path}: is a folder"
    )
    same = str(tmp_path / "r.html")
    assert refused([str(scenario), "--html", same, "--history", same], capsys) == (
        "codegen eval: --html and --history must be two different files"
    )
    store = tmp_path / "facts.sqlite3"
    assert refused([str(scenario), "--store", str(store)], capsys) == (
        "codegen eval: --store is for the HTML report: give --html FILE too"
    )
    html = str(tmp_path / "r.html")
    assert refused([str(scenario), "--html", html, "--store", str(store)], capsys) == (
        f"codegen eval: --store {store}: no such file"
    )
    store.write_text("not a database\n", encoding="utf-8")
    line = refused([str(scenario), "--html", html, "--store", str(store)], capsys)
    assert line.startswith(f"codegen eval: --store {store}: ")
    assert store.read_text(encoding="utf-8") == "not a database\n"  # refused, left as it was
    assert not (tmp_path / "r.html").exists()
