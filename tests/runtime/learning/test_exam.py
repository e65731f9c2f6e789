"""The exam: graders over what the wiki recalls, gaps logged once, never with the answer."""

from __future__ import annotations

from pathlib import Path

from specwire.runtime.continuity.store import ContinuityStore
from specwire.runtime.core.paths import StoreLayout
from specwire.runtime.learning.dataset import ExamSample
from specwire.runtime.learning.exam import GoalGaps, WikiGaps, passes, run_exam
from specwire.runtime.wiki.store import ArticleDraft, WikiStore

INVOICES = "Acme issues invoices on the first business day of each month.\n\n## Sources\n\n- a.md"
SAMPLES = [
    ExamSample("day", "When does Acme issue invoices?", "the first business day of each month"),
    ExamSample("vat", "Which VAT rate applies in Germany?", "19% VAT"),
]


def _wiki(tmp_path: Path) -> WikiStore:
    return WikiStore(StoreLayout.for_cwd(tmp_path, "kb"), require_sources=True)


def test_contains_folds_case_and_whitespace_and_covers_counts_words() -> None:
    article = ["Invoices\nAcme  issues invoices on the FIRST business\nday of each month."]
    assert passes("contains", article, "first business day")
    assert not passes("contains", article, "last business day")
    # covers: 60% of the answer's distinct non-stop-words, in one article
    assert passes("covers", article, "invoices are issued on the first business day")
    assert not passes("covers", article, "refunds reach the card within five days")
    # never pooled: half the words in each of two articles is not covered
    assert not passes("covers", ["alpha beta", "gamma delta"], "alpha beta gamma delta")


def test_an_empty_wiki_fails_every_sample_and_a_studied_one_passes(tmp_path: Path) -> None:
    wiki = _wiki(tmp_path)
    before = run_exam(wiki, SAMPLES, ("contains", "covers"), recall_k=6)
    assert (before.passed, before.total) == (0, 2)
    wiki.write(ArticleDraft("invoices", "Invoices", INVOICES), expected_version=None)
    after = run_exam(wiki, SAMPLES, ("contains", "covers"), recall_k=6)
    assert (after.passed, after.total) == (1, 2)
    assert after.to_data() == {
        "passed": 1,
        "total": 2,
        "score": 0.5,
        "graders": ["contains", "covers"],
        "failed": ["vat"],
    }
    assert after.lines()[0] == "exam: 1/2 passed (50%; graders: contains, covers)"


def test_failed_samples_become_gap_goals_once(tmp_path: Path) -> None:
    layout = StoreLayout.for_cwd(tmp_path, "kb")
    goals = ContinuityStore(layout)
    wiki = _wiki(tmp_path)
    first = run_exam(wiki, SAMPLES, ("contains",), recall_k=6, gaps=GoalGaps(goals))
    second = run_exam(wiki, SAMPLES, ("contains",), recall_k=6, gaps=GoalGaps(goals))
    titles = [goal.title for goal in goals.list_goals()]
    assert titles == [
        "[gap] When does Acme issue invoices?",
        "[gap] Which VAT rate applies in Germany?",
    ]
    assert [r.gap for r in first.results] == ["goal-0001", "goal-0002"]
    assert [r.gap for r in second.results] == [
        "goal-0001 (already open)",
        "goal-0002 (already open)",
    ]


def test_without_plans_a_gap_is_a_wiki_note_that_cannot_pass_the_exam(tmp_path: Path) -> None:
    wiki = _wiki(tmp_path)
    samples = [ExamSample("vat", "Which VAT rate applies in Germany?", "VAT rate applies Germany")]
    first = run_exam(wiki, samples, ("covers",), recall_k=6, gaps=WikiGaps(wiki))
    assert first.results[0].gap == "gap-which-vat-rate-applies-in-germany"
    # The gap note holds the question's words, but gap notes are not knowledge: still failing.
    again = run_exam(wiki, samples, ("covers",), recall_k=6, gaps=WikiGaps(wiki))
    assert again.passed == 0
