"""The exam: each sample's question asked of the agent's wiki, the answer checked by graders.

What the agent "answers" is what it has learned: the top articles its wiki recalls for the
question (the same ranking its prompt's recall uses, ``wiki.queries.recall``; at most the
wiki's ``recallK``, default 6), gap notes left out (they hold questions, not knowledge). Each
article is graded on its own, never several pooled (as the continuity graders count "covered"):

- ``contains``: the answer appears in the article, case and whitespace folded;
- ``covers``: at least 60% of the answer's distinct words (stop words dropped) are in the
  article (``runtime.evals.tokens.covered_by_any``).

A sample passes when every listed grader passes on some article. A failed sample's question
becomes a ``[gap] <question>`` goal (with continuity's plans; otherwise a gap note in the wiki),
once: a goal already open for that question is not written again. The answer never goes into
a gap, so logging a gap cannot make the next exam pass.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Protocol

from specwire.runtime.core.errors import StoreError
from specwire.runtime.core.fragment import GAP_TITLE_PREFIX, ExamGrader
from specwire.runtime.learning.dataset import ExamSample
from specwire.runtime.wiki import queries
from specwire.runtime.wiki.store import GAP_PREFIX, WikiStore

GAP_TOPIC_MAX_CHARS: Final = 180


def _folded(text: str) -> str:
    return " ".join(text.casefold().split())


def passes(grader: ExamGrader, articles: Sequence[str], answer: str) -> bool:
    if grader == "contains":
        wanted = _folded(answer)
        return bool(wanted) and any(wanted in _folded(text) for text in articles)
    from specwire.runtime.evals.tokens import covered_by_any  # loaded by the first exam

    return covered_by_any(articles, answer)


class RecallingWiki(Protocol):
    """A wiki the exam asks that is not the local store (Thredz's: ``runtime.learning.
    thredz_home``)."""

    def recall_texts(self, question: str, k: int) -> list[str]: ...


def recalled_articles(store: WikiStore | RecallingWiki, question: str, k: int) -> list[str]:
    """The texts (title and body) of the articles the wiki recalls for ``question``."""
    if not isinstance(store, WikiStore):
        return store.recall_texts(question, k)
    hits = queries.recall(store.snapshot(), question, k + k, store.vectors)
    texts = [
        f"{hit.article.title}\n{hit.article.body}"
        for hit in hits
        if not hit.article.slug.startswith(GAP_PREFIX)
    ]
    return texts[:k]


@dataclass(frozen=True)
class SampleResult:
    sample: ExamSample
    failed_graders: tuple[ExamGrader, ...]
    # A failure: what it was logged as (a goal id, a gap note's slug), or why it was not. A
    # pass: the open gap goal an earlier failure of it left, if any.
    gap: str | None = None

    @property
    def passed(self) -> bool:
        return not self.failed_graders


@dataclass(frozen=True)
class ExamReport:
    graders: tuple[ExamGrader, ...]
    results: tuple[SampleResult, ...] = field(default=())

    @property
    def passed(self) -> int:
        return sum(1 for result in self.results if result.passed)

    @property
    def total(self) -> int:
        return len(self.results)

    @property
    def score(self) -> float:
        return self.passed / self.total if self.total else 0.0

    def summary(self) -> str:
        return (
            f"exam: {self.passed}/{self.total} passed ({self.score:.0%}; graders: "
            f"{', '.join(self.graders)})"
        )

    def lines(self) -> list[str]:
        rows = [self.summary()]
        for result in self.results:
            if result.passed:
                close = (
                    f" (its gap {result.gap} is still open: close it with GoalUpdate)"
                    if result.gap
                    else ""
                )
                rows.append(f"- pass {result.sample.id}: {result.sample.question}{close}")
                continue
            failed = ", ".join(result.failed_graders)
            logged = f" → {result.gap}" if result.gap else ""
            rows.append(f"- FAIL {result.sample.id} ({failed}): {result.sample.question}{logged}")
        return rows

    def to_data(self) -> dict[str, Any]:
        return {
            "passed": self.passed,
            "total": self.total,
            "score": round(self.score, 4),
            "graders": list(self.graders),
            "failed": [result.sample.id for result in self.results if not result.passed],
        }


class GapLog(Protocol):
    """Where a failed sample's question is recorded; returns what it was recorded as."""

    def log_gap(self, question: str, sample_id: str) -> str: ...

    def open_gap(self, question: str) -> str | None:
        """The open gap an earlier failure of ``question`` left, if this log can tell."""
        ...


def run_exam(
    store: WikiStore | RecallingWiki,
    samples: Sequence[ExamSample],
    graders: Sequence[ExamGrader],
    *,
    recall_k: int,
    gaps: GapLog | None = None,
) -> ExamReport:
    results: list[SampleResult] = []
    for sample in samples:
        articles = recalled_articles(store, sample.question, recall_k)
        failed = tuple(g for g in graders if not passes(g, articles, sample.answer))
        gap: str | None = None
        if gaps is not None:
            try:
                gap = (
                    gaps.log_gap(sample.question, sample.id)
                    if failed
                    else gaps.open_gap(sample.question)
                )
            except StoreError as exc:
                gap = f"not logged: {' '.join(str(exc).split())}" if failed else None
        results.append(SampleResult(sample, failed, gap))
    return ExamReport(tuple(graders), tuple(results))


def gap_topic(question: str) -> str:
    text = " ".join(question.split())
    return text if len(text) <= GAP_TOPIC_MAX_CHARS else text[: GAP_TOPIC_MAX_CHARS - 1] + "…"


class GoalGaps:
    """Failed samples as ``[gap] <question>`` continuity goals, one open goal per question."""

    def __init__(self, goals: Any) -> None:
        self.goals = goals  # a ContinuityStore (list_goals, write_goal)

    def log_gap(self, question: str, sample_id: str) -> str:
        found = self.open_gap(question)
        if found is not None:
            return f"{found} (already open)"
        return str(self.goals.write_goal(GAP_TITLE_PREFIX + gap_topic(question)).id)

    def open_gap(self, question: str) -> str | None:
        title = GAP_TITLE_PREFIX + gap_topic(question)
        for goal in self.goals.list_goals():
            if goal.title == title and goal.status not in ("proven", "done"):
                return str(goal.id)
        return None


class WikiGaps:
    """Without continuity's plans: failed samples as the wiki's gap notes (``gap-<slug>``)."""

    def __init__(self, store: WikiStore) -> None:
        self.store = store

    def log_gap(self, question: str, sample_id: str) -> str:
        done = self.store.log_gap(
            gap_topic(question), detail=f"failed exam sample {sample_id}", tags=(), priority="high"
        )
        return done.article.slug

    def open_gap(self, question: str) -> str | None:
        return None  # a gap note is the wiki's bookkeeping; nothing to close
