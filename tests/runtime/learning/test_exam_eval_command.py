"""``codegen eval exam``'s runtime side: before/after scores, one-line refusals, exit status."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from specwire.runtime.core.tool_types import is_evidence_tool, is_memory_tool
from specwire.runtime.learning.eval_command import SpecProblem, main

DOC = "# Invoices\n\nAcme issues invoices on the first business day of each month.\n"
EXAM = (
    '{"id": "day", "question": "When are invoices issued?", "answer": "first business day"}\n'
    '{"id": "vat", "question": "Which VAT rate applies?", "answer": "19% VAT"}\n'
)


def _fragment(**learning: Any) -> dict[str, Any]:
    return {
        "spec_name": "learner",
        "version": 6,
        "memory": {"wiki": {"require_sources": True}},
        "learning": {"domain": "billing", "sources": ["doc.md"], **learning},
    }


def _spec_folder(tmp_path: Path, exam: str = EXAM) -> Path:
    (tmp_path / "doc.md").write_text(DOC, "utf-8")
    (tmp_path / "exam.jsonl").write_text(exam, "utf-8")
    spec = tmp_path / "learner.yaml"
    spec.write_text("(compiled by the loader)\n", "utf-8")
    return spec


EXAM_BLOCK = {"exam": {"dataset": "exam.jsonl", "graders": ["contains"]}}


def test_scores_before_and_after_a_study_pass_and_nothing_written_beside_the_spec(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = _spec_folder(tmp_path)
    assert main([str(spec), "--json"], lambda path: _fragment(**EXAM_BLOCK)) == 0
    [report] = json.loads(capsys.readouterr().out)
    assert (report["before"]["passed"], report["after"]["passed"], report["after"]["total"]) == (
        0,
        1,
        2,
    )
    assert report["after"]["failed"] == ["vat"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["doc.md", "exam.jsonl", "learner.yaml"]


def test_a_spec_without_an_exam_a_bad_dataset_or_a_bad_spec_is_one_line_and_status_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = _spec_folder(tmp_path, exam="not json\n")
    assert main([str(spec)], lambda path: _fragment()) == 2
    assert capsys.readouterr().err.endswith("no learning.exam to run (add learning: {exam: …})\n")
    assert main([str(spec)], lambda path: _fragment(**EXAM_BLOCK)) == 2
    assert capsys.readouterr().err == (
        'exam.jsonl:1: not JSON: expected {"question": …, "answer": …}\n'
    )

    def broken(path: Path) -> dict[str, Any]:
        raise SpecProblem(['learner.yaml:4:1: learning: missing required key "domain"'])

    assert main([str(spec)], broken) == 2
    assert capsys.readouterr().err.count("\n") == 1


def test_the_learning_tools_are_memory_tools_never_evidence() -> None:
    for name in ("study_sources", "run_exam"):
        assert is_memory_tool(name) and not is_evidence_tool(name)
