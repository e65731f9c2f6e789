"""``study_sources`` and ``run_exam``: the learning loop's tools.

Both take ``{}``: what is studied and what is asked come from the spec (``learning.sources``,
``learning.exam``), never from the model. ``run_exam`` writes goals (its failed samples'
gaps) and ``study_sources`` writes articles, so both are destructive; neither needs a
justification (like ``log_knowledge_gap``: they only add, and every wiki edit keeps the
previous version).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Protocol

from specwire.runtime.core.fragment import (
    EXAM_TOOL_NAME,
    LEARNING_TOOL_NAMES,
    STUDY_TOOL_NAME,
)
from specwire.runtime.core.fragment_data import LearningData
from specwire.runtime.core.tool_types import (
    LazyInput,
    Tool,
    ToolContext,
    ToolRefusal,
    ToolResult,
    ToolTable,
    tools_from_table,
)
from specwire.runtime.learning.dataset import DatasetError, load_dataset
from specwire.runtime.learning.exam import ExamReport, GapLog, RecallingWiki, run_exam
from specwire.runtime.learning.study import StudyReport, StudyWiki, default_fetch, study_pass
from specwire.runtime.wiki.store import WikiStore


class LearningWiki(StudyWiki, RecallingWiki, Protocol):
    """A wiki other than the local store that the loop studies into and examines (Thredz's)."""


EXAM_EVENT: Final = "exam_run"
STUDY_EVENT: Final = "study_pass"

_DESCRIPTIONS: Final = {
    STUDY_TOOL_NAME: "Study pass: read every source the spec lists for this agent's learning "
    "(files of the workspace, allowed web pages) into sourced wiki articles, one per source; "
    "unchanged sources are left alone. Takes no arguments.",
    EXAM_TOOL_NAME: "Run the spec's exam: ask each question of the wiki and grade what it "
    "recalls against the expected answer; every failed question becomes a [gap] goal to aim "
    "the next study pass at. Takes no arguments.",
}


@dataclass(frozen=True)
class LearningContext:
    """What the learning tools work on: the wiki, the spec's learning block, the workspace
    sources are read from, where gaps go and how many articles an exam question reads."""

    store: WikiStore | LearningWiki
    learning: LearningData
    workspace: Path
    gaps: GapLog | None
    recall_k: int
    fetch: Callable[[], Any] | None = None


def study(context: LearningContext, session_id: str | None = None) -> StudyReport:
    sources = context.learning.sources
    fetch = context.fetch() if context.fetch is not None else default_fetch(sources)
    return study_pass(context.store, sources, context.workspace, fetch=fetch, session_id=session_id)


def exam(context: LearningContext) -> ExamReport:
    """Raises ``DatasetError`` when the dataset cannot be used, ``ToolRefusal`` without an exam."""
    exam_data = context.learning.exam
    if exam_data is None:
        raise ToolRefusal("this spec's learning block has no exam")
    samples = load_dataset(context.workspace, exam_data.dataset)
    return run_exam(
        context.store,
        samples,
        exam_data.graders,
        recall_k=context.recall_k,
        gaps=context.gaps,
    )


def learning_tools(context: LearningContext) -> list[Tool]:
    """``study_sources``, and ``run_exam`` when the spec has an exam, in that order."""

    def study_handler(parsed: Any, ctx: ToolContext) -> ToolResult:
        report = study(context, ctx.session_id or None)
        ctx.emit(
            STUDY_EVENT,
            {"sources": len(report.sources), "written": report.written,
             "failed": report.count("failed")},
        )  # fmt: skip
        if not report.sources:
            return ToolResult("no sources to study: the spec's learning block lists none")
        return ToolResult("\n".join(report.lines()), report.count("failed") == len(report.sources))

    def exam_handler(parsed: Any, ctx: ToolContext) -> ToolResult:
        try:
            report = exam(context)
        except DatasetError as exc:
            raise ToolRefusal(str(exc)) from None
        ctx.emit(EXAM_EVENT, report.to_data())
        return ToolResult("\n".join(report.lines()))

    change: dict[str, Any] = {"destructive": True}
    table: ToolTable = {
        STUDY_TOOL_NAME: (_input("StudySourcesInput"), study_handler, change),
        EXAM_TOOL_NAME: (_input("RunExamInput"), exam_handler, change),
    }
    names = [
        name for name in LEARNING_TOOL_NAMES if name != EXAM_TOOL_NAME or context.learning.exam
    ]
    return tools_from_table(names, _DESCRIPTIONS, table)


def _input(name: str) -> LazyInput:
    return LazyInput("specwire.runtime.learning.inputs", name)
