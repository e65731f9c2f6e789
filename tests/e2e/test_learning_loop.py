"""End to end: the learning example's bundle studies two local documents and passes more of its
exam after the study pass than before; a question the documents do not answer stays a [gap] goal.

Offline: the scripted model drives the tools (``call run_exam {}``, ``call study_sources {}``),
the deterministic embedder (``mock/deterministic``) ranks the wiki. ``codegen eval exam`` reports
the same before/after scores without a bundle.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from test_support_bot_remembers import codegen, run_bundle, session_events

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "learning-billing.yaml"
VAT_GAP = "[gap] Which VAT rate applies to German customers?"


def _workdir(tmp_path: Path) -> Path:
    workdir = tmp_path / "work"
    (workdir / "home").mkdir(parents=True)
    shutil.copytree(ROOT / "examples" / "learning", workdir / "learning")
    return workdir


def test_a_study_pass_raises_the_exam_score_and_a_miss_becomes_a_gap_goal(tmp_path: Path) -> None:
    out = tmp_path / "out"
    built = codegen("build", str(EXAMPLE), "--out", str(out), cwd=ROOT)
    assert built.returncode == 0, built.stderr
    [agent] = sorted(out.rglob("agent.py"))
    workdir = _workdir(tmp_path)

    run = run_bundle(
        agent,
        workdir,
        "/help",
        "call run_exam {}",
        "call study_sources {}",
        "call run_exam {}",
        "call study_sources {}",
    )
    assert run.returncode == 0, run.stderr
    assert "[learning] Acme billing: 2 source(s), exam learning/exam.jsonl" in run.stderr
    for command in ("/study", "/reflect", "/exam"):
        assert command in run.stdout

    [events] = session_events(workdir)
    results = [e["payload"] for e in events if e["type"] == "tool_result"]
    assert [(r["name"], r["isError"]) for r in results] == [
        ("run_exam", False),
        ("study_sources", False),
        ("run_exam", False),
        ("study_sources", False),
    ]
    exams = [e["payload"] for e in events if e["type"] == "exam_run"]
    assert [(x["passed"], x["total"]) for x in exams] == [(0, 5), (4, 5)]
    assert exams[1]["failed"] == ["vat"]
    studies = [e["payload"] for e in events if e["type"] == "study_pass"]
    assert studies == [
        {"sources": 2, "written": 2, "failed": 0},
        {"sources": 2, "written": 0, "failed": 0},  # unchanged sources are left alone
    ]

    wiki = workdir / ".specwire" / "wiki" / "learning-billing" / "articles"
    article = (wiki / "study-learning-invoices-md.md").read_text(encoding="utf-8")
    assert "## Sources\n\n- learning/invoices.md" in article
    goals = (workdir / ".specwire" / "state" / "learning-billing" / "goals.yaml").read_text(
        encoding="utf-8"
    )
    assert goals.count(VAT_GAP) == 1  # logged by the first exam, not again by the second


def test_codegen_eval_exam_reports_scores_before_and_after_a_study_pass(tmp_path: Path) -> None:
    shutil.copy(EXAMPLE, tmp_path / EXAMPLE.name)
    shutil.copytree(ROOT / "examples" / "learning", tmp_path / "learning")
    ran = codegen("eval", "exam", EXAMPLE.name, "--json", cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr
    [report] = json.loads(ran.stdout)
    assert (report["before"]["passed"], report["after"]["passed"]) == (0, 4)
    assert report["study"] == {"sources": 2, "written": 2, "unchanged": 0, "failed": 0}
    assert not (tmp_path / ".specwire").exists()  # the scratch wiki is not the spec's folder

    refused = codegen("eval", "exam", str(ROOT / "examples" / "cli-wiki.yaml"), cwd=tmp_path)
    assert refused.returncode == 2
    assert refused.stderr.strip().endswith("no learning.exam to run (add learning: {exam: …})")


CHANNEL_SPEC = """\
name: learning-desk
target: channel
agent: {model: scripted, instructions: You answer billing questions from your wiki.}
channels: {webhook: {token: $DESK_TOKEN}}
routing: {sessionKey: thread}
memory:
  embedder: mock/deterministic
  wiki: {}
  dream: {every: 1d, mode: deterministic}
continuity: true
learning:
  domain: Acme billing
  sources: [learning/invoices.md, learning/refunds.md]
  exam: {dataset: learning/exam.jsonl, graders: [contains]}
"""


def test_a_channel_bot_studies_after_its_dream(tmp_path: Path) -> None:
    spec = tmp_path / "learning-desk.yaml"
    spec.write_text(CHANNEL_SPEC, encoding="utf-8")
    out = tmp_path / "out"
    built = codegen("build", str(spec), "--out", str(out), cwd=tmp_path)
    assert built.returncode == 0, built.stderr
    [agent] = sorted(out.rglob("agent.py"))
    workdir = _workdir(tmp_path)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("DESK_TOKEN", "unused-on-the-console")
        run = run_bundle(agent, workdir, "t1: hello")
    assert run.returncode == 0, run.stderr
    # The first turn starts the day's dream; a study pass follows it before the process ends.
    assert (
        "[learning] after the dream: study pass over 2 source(s): 2 article(s) created, "
        "0 updated, 0 unchanged, 0 failed" in run.stderr
    )
    articles = workdir / ".specwire" / "wiki" / "learning-desk" / "articles"
    assert sorted(p.name for p in articles.iterdir()) == [
        "study-learning-invoices-md.md",
        "study-learning-refunds-md.md",
    ]
